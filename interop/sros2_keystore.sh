#!/bin/sh
# sros2_keystore.sh - makes an SROS2 keystore with openssl, with the files,
# layout and contents `ros2 security` (sros2, Humble) writes:
#
#   sros2_keystore.sh create_keystore DIR
#   sros2_keystore.sh create_enclave DIR /name [PERMISSIONS_XML]
#
# create_keystore: one CA (EC prime256v1, CN=sros2CA, basicConstraints
# critical CA:TRUE pathlen:1, SHA-256, 3650 days) in public/ca.cert.pem and
# private/ca.key.pem (PKCS#8), used as identity CA and permissions CA through
# the symlinks {public,private}/{identity,permissions}_ca.*.pem;
# enclaves/governance.xml (sros2's default governance: domain $ROS_DOMAIN_ID,
# no unauthenticated participants, join access control, discovery and
# liveliness ENCRYPT, rtps SIGN, every topic read/write access controlled,
# metadata and data ENCRYPT; $SROS2_RTPS_PROTECTION overrides the rtps kind)
# and its S/MIME signature enclaves/governance.p7s (openssl smime -sign
# -text, detached: what sros2's PKCS7_sign(DETACHED|TEXT) writes).
#
# create_enclave: enclaves/<name>/ with symlinks to the CA certificates and
# governance.p7s, key.pem (prime256v1, PKCS#8) and cert.pem (CN=<name>,
# issued by the identity CA, CA:FALSE), permissions.xml (the default
# policy's grant: CN=<name>, validity = the certificate's, domain
# $ROS_DOMAIN_ID, publish and subscribe rt/*, rq/*Request, rr/*Reply, plus
# ros_discovery_info, default DENY; or PERMISSIONS_XML as given) and
# permissions.p7s.
#
# Differences from sros2: the certificates' notBefore is now (sros2 backdates
# a day; openssl 3.0 cannot without a CA database), and the XML is written
# as text, not through lxml (same elements and values).
set -eu

die() { echo "sros2_keystore.sh: $*" >&2; exit 2; }
command -v openssl >/dev/null 2>&1 || die "openssl not found"
domain=${ROS_DOMAIN_ID:-0}

newkey() { # FILE: a prime256v1 key in PKCS#8 PEM
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1" 2>/dev/null
  chmod 600 "$1"
}
serial() { echo "0x$(openssl rand -hex 16)"; }
sign() { # CERT KEY IN OUT: detached clear-text S/MIME with text/plain headers
  openssl smime -sign -text -in "$3" -out "$4" -signer "$1" -inkey "$2"
}
isodate() { # openssl date "Dec  2 16:50:00 2026 GMT" -> 2026-12-02T16:50:00
  date -u -d "$(echo "$1" | sed 's/ GMT$//')" +%Y-%m-%dT%H:%M:%S
}

governance() { # DOMAIN RTPS_KIND
  cat <<XML
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains>
        <id>$1</id>
      </domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>$2</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
XML
}

permissions() { # NAME DOMAIN NOT_BEFORE NOT_AFTER
  topics="<topic>rq/*Request</topic><topic>rr/*Reply</topic><topic>rt/*</topic>"
  cat <<XML
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="$1">
      <subject_name>CN=$1</subject_name>
      <validity>
        <not_before>$3</not_before>
        <not_after>$4</not_after>
      </validity>
      <allow_rule>
        <domains>
          <id>$2</id>
        </domains>
        <publish>
          <topics>$topics</topics>
        </publish>
        <subscribe>
          <topics>$topics</topics>
        </subscribe>
      </allow_rule>
      <allow_rule>
        <domains>
          <id>$2</id>
        </domains>
        <publish>
          <topics>
            <topic>ros_discovery_info</topic>
          </topics>
        </publish>
        <subscribe>
          <topics>
            <topic>ros_discovery_info</topic>
          </topics>
        </subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
XML
}

create_keystore() {
  ks=$1
  mkdir -p "$ks/public" "$ks/private" "$ks/enclaves"
  if [ ! -f "$ks/private/ca.key.pem" ]; then
    newkey "$ks/private/ca.key.pem"
    openssl req -new -x509 -sha256 -days 3650 -key "$ks/private/ca.key.pem" -subj "/CN=sros2CA" \
      -set_serial "$(serial)" -addext "basicConstraints=critical,CA:TRUE,pathlen:1" \
      -addext "subjectKeyIdentifier=none" -addext "authorityKeyIdentifier=none" -out "$ks/public/ca.cert.pem"
    for f in identity_ca permissions_ca; do
      ln -sf ca.cert.pem "$ks/public/$f.cert.pem"
      ln -sf ca.key.pem "$ks/private/$f.key.pem"
    done
  fi
  if [ ! -f "$ks/enclaves/governance.xml" ]; then
    governance "$domain" "${SROS2_RTPS_PROTECTION:-SIGN}" >"$ks/enclaves/governance.xml"
  fi
  if [ ! -f "$ks/enclaves/governance.p7s" ]; then
    sign "$ks/public/permissions_ca.cert.pem" "$ks/private/permissions_ca.key.pem" \
      "$ks/enclaves/governance.xml" "$ks/enclaves/governance.p7s"
  fi
}

create_enclave() {
  ks=$1 name=$2 policy=${3:-}
  case $name in /*) ;; *) die "enclave name must start with /: $name" ;; esac
  [ -f "$ks/enclaves/governance.p7s" ] || die "$ks is not a keystore (create_keystore first)"
  rel=${name#/}
  dir=$ks/enclaves/$rel
  mkdir -p "$dir"
  up=$(echo "$rel" | sed 's|[^/][^/]*|..|g')   # enclaves/a/b -> ../..
  ln -sf "$up/../public/identity_ca.cert.pem" "$dir/identity_ca.cert.pem"
  ln -sf "$up/../public/permissions_ca.cert.pem" "$dir/permissions_ca.cert.pem"
  ln -sf "$up/governance.p7s" "$dir/governance.p7s"
  if [ ! -f "$dir/cert.pem" ] || [ ! -f "$dir/key.pem" ]; then
    newkey "$dir/key.pem"
    openssl req -new -key "$dir/key.pem" -subj "/CN=$(echo "$name" | sed 's|/|\\/|g')" -out "$dir/cert.csr"
    printf 'basicConstraints=CA:FALSE\nsubjectKeyIdentifier=none\nauthorityKeyIdentifier=none\n' >"$dir/cert.ext"
    openssl x509 -req -sha256 -days 3650 -in "$dir/cert.csr" -CA "$ks/public/identity_ca.cert.pem" \
      -CAkey "$ks/private/identity_ca.key.pem" -set_serial "$(serial)" -extfile "$dir/cert.ext" \
      -out "$dir/cert.pem" 2>/dev/null
    rm -f "$dir/cert.csr" "$dir/cert.ext"
  fi
  if [ -n "$policy" ]; then
    cp "$policy" "$dir/permissions.xml"
  else
    nb=$(isodate "$(openssl x509 -in "$dir/cert.pem" -noout -startdate | cut -d= -f2)")
    na=$(isodate "$(openssl x509 -in "$dir/cert.pem" -noout -enddate | cut -d= -f2)")
    permissions "$name" "$domain" "$nb" "$na" >"$dir/permissions.xml"
  fi
  sign "$ks/public/permissions_ca.cert.pem" "$ks/private/permissions_ca.key.pem" \
    "$dir/permissions.xml" "$dir/permissions.p7s"
}

case ${1:-} in
  create_keystore) [ $# = 2 ] || die "usage: $0 create_keystore DIR"; create_keystore "$2" ;;
  create_enclave) [ $# = 3 ] || [ $# = 4 ] || die "usage: $0 create_enclave DIR /name [PERMISSIONS_XML]"; create_enclave "$2" "$3" "${4:-}" ;;
  *) die "usage: $0 create_keystore DIR | create_enclave DIR /name [PERMISSIONS_XML]" ;;
esac
