// Package keyexpr is zenoh's key expressions: the canonical-form check
// (Validate) and the wildcard relations Intersects and Includes, with
// zenoh 1.x's semantics.
//
// A key expression is a '/'-separated list of non-empty chunks. A chunk is
// "*" (any one chunk), "**" (any number of chunks, zero included), or
// verbatim text in which "$*" matches any run of characters inside the
// chunk. A chunk that starts with '@' is verbatim: wildcards never match it,
// only the same chunk does (so "@ros2_lv/0/**" matches tokens and "**"
// alone does not reach into "@..." chunks). '#' and '?' are forbidden.
//
// Canonical form (which zenoh requires on the wire, and Validate checks):
// no empty chunk (so no leading, trailing or double '/'), '*' only as a
// whole "*" or "**" chunk or after '$', "$*" never alone in a chunk (write
// "*") nor followed by '$', no "**/**" (write "**") and no "**/*" (write
// "*/**").
//
// Intersects and Includes run in time polynomial in the lengths of their
// arguments whatever the wildcards (zenoh's recursion is memoized here),
// so they are safe on key expressions from the network.
package keyexpr
