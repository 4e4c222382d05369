// Package sros2 links SROS2 — DDS Security's builtin plugins
// (DDS:Auth:PKI-DH, DDS:Access:Permissions, DDS:Crypto:AES-GCM-GMAC) — into
// a program. Import it for its side effect:
//
//	import _ "github.com/nros-go/nros/sros2"
//
// A program that imports it runs secured where the user asks, as rcl does:
// ROS_SECURITY_ENABLE=true, ROS_SECURITY_STRATEGY, ROS_SECURITY_KEYSTORE and
// the enclave from --ros-args --enclave (or ROS_SECURITY_ENCLAVE_OVERRIDE).
// A program that does not import it carries none of the plugins' code
// (certificates, XML, big numbers, elliptic curves: about 1.3 MB of the
// binary, resident in every process); asked for security, its DDS transport
// refuses to start under ROS_SECURITY_STRATEGY=Enforce with an error naming
// this package, and under Permissive runs unsecured with that warning. ROS 2
// does the same with its security plugins, which the DDS library loads only
// when security is enabled.
//
// Programs that build an rtps.Config themselves can call
// rtps.EnableSecurity instead.
package sros2

import "github.com/nros-go/nros/rmw/rtps"

func init() { rtps.EnableSecurity() }
