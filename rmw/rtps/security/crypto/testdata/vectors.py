#!/usr/bin/env python3
"""Known-answer vectors for vectors_test.go, computed with OpenSSL (through
python3-cryptography) from the formulas of DDS Security 1.1 §9.5 as Cyclone
DDS and Fast DDS apply them. Independent of the Go code: run it and compare
with the constants in vectors_test.go."""
import hashlib, hmac, struct
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

def h(b): return b.hex()
salt = bytes(range(0x00, 0x20)); key = bytes(range(0x20, 0x40)); rkey = bytes(range(0x40, 0x60))
sid = bytes([0, 0, 0, 5]); ivs = struct.pack('>Q', 11); iv = sid + ivs

def skey(label, master, n): return hmac.new(master[:n], label + salt[:n] + sid, hashlib.sha256).digest()[:n]

def gcm(k, pt, aad=None):
    out = AESGCM(k).encrypt(iv, pt, aad)
    return out[:-16], out[-16:]

def crypto_header(kind, keyid): return bytes([0, 0, 0, kind]) + keyid + sid + ivs
def smh(i, n): return bytes([i, 1]) + struct.pack('<H', n)

print('sessionkey256', h(skey(b'SessionKey', key, 32)))
print('receiverkey256', h(skey(b'SessionReceiverKey', rkey, 32)))
print('sessionkey128', h(skey(b'SessionKey', key, 16)))

# payload, AES256_GCM, key id 1
k = skey(b'SessionKey', key, 32)
pt = b'ROS2 sec payload'
ct, tag = gcm(k, pt)
print('payload256gcm', h(crypto_header(4, b'\0\0\0\1') + struct.pack('>I', len(ct)) + ct + tag + b'\0\0\0\0'))

# submessage, AES128_GMAC, key id 1, one receiver (key id 2)
k = skey(b'SessionKey', key, 16); rk = skey(b'SessionReceiverKey', rkey, 16)
sub = bytes([0x07, 0x01, 28, 0]) + bytes(range(28))  # a HEARTBEAT-shaped submessage
_, tag = gcm(k, b'', sub)
_, rtag = gcm(rk, b'', tag)
print('submsg128gmac', h(smh(0x31, 20) + crypto_header(1, b'\0\0\0\1') + sub + smh(0x32, 40) + tag + struct.pack('>I', 1) + b'\0\0\0\2' + rtag))

# RTPS message, AES256_GCM, key id 1, one receiver (key id 2)
k = skey(b'SessionKey', key, 32); rk = skey(b'SessionReceiverKey', rkey, 32)
hdr = b'RTPS' + bytes([2, 1, 0x01, 0x10]) + bytes(range(0xa0, 0xac))
body = bytes([0x09, 0x01, 8, 0]) + bytes(range(8))  # an INFO_TS
infosrc = smh(0x0c, 20) + b'\0\0\0\0' + hdr[4:20]
ct, tag = gcm(k, infosrc + body)
_, rtag = gcm(rk, b'', tag)
print('message256gcm', h(hdr + smh(0x33, 20) + crypto_header(4, b'\0\0\0\1') + smh(0x30, 4 + len(ct)) + struct.pack('>I', len(ct)) + ct + smh(0x34, 40) + tag + struct.pack('>I', 1) + b'\0\0\0\2' + rtag))

# key exchange material
c1 = bytes([0x11] * 32); c2 = bytes([0x22] * 32); secret = bytes(range(32))
def kx(a, cookie, b): return hmac.new(hashlib.sha256(a + cookie + b).digest(), secret, hashlib.sha256).digest()
print('kxsalt', h(kx(c1, b'keyexchange salt', c2)))
print('kxkey', h(kx(c2, b'key exchange key', c1)))
