package keystore

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// XInclude as sros2's policies use it (lxml's policy.xinclude()):
// <xi:include href="common/node.xml" xpointer="xpointer(/profile/*)"/>
// replaced by the selected elements of the named file, resolved relative to
// the including file. Supported pointers: none (the root element) and
// xpointer(/a/b/...) with an optional final /* (the children).

const xincludeNS1, xincludeNS2 = "http://www.w3.org/2001/XInclude", "http://www.w3.org/2003/XInclude"

// maxIncludeDepth bounds nested includes (and include cycles).
const maxIncludeDepth = 16

type xnode struct {
	name     xml.Name
	attrs    []xml.Attr
	children []*xnode // elements; text is kept in text
	text     string
}

func parseDOM(b []byte) (*xnode, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []*xnode
	var root *xnode
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xnode{name: t.Name, attrs: append([]xml.Attr(nil), t.Attr...)}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

func (n *xnode) attr(local string) (string, bool) {
	for _, a := range n.attrs {
		if a.Name.Local == local && (a.Name.Space == "" || a.Name.Space == "xmlns") {
			return a.Value, true
		}
	}
	return "", false
}

func isInclude(n *xnode) bool {
	return n.name.Local == "include" && (n.name.Space == xincludeNS1 || n.name.Space == xincludeNS2)
}

// expand replaces the includes under n; dir is the directory hrefs are
// relative to (empty: includes are an error).
func expand(n *xnode, dir string, depth int) error {
	var out []*xnode
	for _, c := range n.children {
		if !isInclude(c) {
			if err := expand(c, dir, depth); err != nil {
				return err
			}
			out = append(out, c)
			continue
		}
		href, _ := c.attr("href")
		if href == "" {
			return errors.New("xi:include without href")
		}
		if dir == "" {
			return fmt.Errorf("xi:include of %q: includes need the policy's file (use ParsePolicyFile)", href)
		}
		if depth >= maxIncludeDepth {
			return fmt.Errorf("xi:include of %q: includes nested deeper than %d", href, maxIncludeDepth)
		}
		path := filepath.Join(dir, filepath.FromSlash(href))
		b, err := readFile(path)
		if err != nil {
			return err
		}
		root, err := parseDOM(b)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := expand(root, filepath.Dir(path), depth+1); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		ptr, _ := c.attr("xpointer")
		sel, err := selectXPointer(root, ptr)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, sel...)
	}
	n.children = out
	return nil
}

// selectXPointer evaluates "", "xpointer(/a/b)" or "xpointer(/a/b/*)".
func selectXPointer(root *xnode, ptr string) ([]*xnode, error) {
	if ptr == "" {
		return []*xnode{root}, nil
	}
	p := strings.TrimSpace(ptr)
	if !strings.HasPrefix(p, "xpointer(/") || !strings.HasSuffix(p, ")") {
		return nil, fmt.Errorf("unsupported xpointer %q", ptr)
	}
	steps := strings.Split(p[len("xpointer(/"):len(p)-1], "/")
	all := false
	if steps[len(steps)-1] == "*" {
		all = true
		steps = steps[:len(steps)-1]
	}
	if len(steps) == 0 || steps[0] != root.name.Local {
		return nil, nil
	}
	cur := []*xnode{root}
	for _, s := range steps[1:] {
		var next []*xnode
		for _, c := range cur {
			for _, k := range c.children {
				if k.name.Local == s {
					next = append(next, k)
				}
			}
		}
		cur = next
	}
	if !all {
		return cur, nil
	}
	var out []*xnode
	for _, c := range cur {
		out = append(out, c.children...)
	}
	return out, nil
}

func (n *xnode) write(b *bytes.Buffer) {
	b.WriteByte('<')
	b.WriteString(n.name.Local)
	for _, a := range n.attrs {
		if a.Name.Space != "" {
			continue // namespace declarations and prefixed attributes (xml:base)
		}
		fmt.Fprintf(b, " %s=\"", a.Name.Local)
		xml.EscapeText(b, []byte(a.Value))
		b.WriteByte('"')
	}
	b.WriteByte('>')
	if len(n.children) == 0 {
		xml.EscapeText(b, []byte(n.text))
	}
	for _, c := range n.children {
		c.write(b)
	}
	fmt.Fprintf(b, "</%s>", n.name.Local)
}

// resolveIncludes returns the document with its XIncludes expanded (dir ""
// refuses includes). A document without includes is returned as it is.
func resolveIncludes(doc []byte, dir string) ([]byte, error) {
	if !bytes.Contains(doc, []byte("XInclude")) {
		return doc, nil
	}
	root, err := parseDOM(doc)
	if err != nil {
		return nil, err
	}
	if err := expand(root, dir, 0); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	root.write(&b)
	return b.Bytes(), nil
}

// ParsePolicyFile reads a policy file and parses it, expanding the
// XIncludes sros2's policies use (relative to the file).
func ParsePolicyFile(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := resolveIncludes(b, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p, err := parsePolicy(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
