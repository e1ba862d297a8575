package einvoice

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// node is an element of a document read back: the validator walks UBL and
// CII by local names (each syntax's names are unambiguous within its
// parents), so a tree is simpler than a struct per schema type.
type node struct {
	space, local string
	attrs        []xml.Attr
	text         strings.Builder
	kids         []*node
}

// parseTree reads one XML document into a tree.
func parseTree(r io.Reader) (*node, error) {
	dec := xml.NewDecoder(r)
	var stack []*node
	var root *node
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("einvoice: not well-formed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{space: t.Name.Space, local: t.Name.Local, attrs: t.Attr}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("einvoice: not well-formed XML: more than one root element")
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("einvoice: empty document")
	}
	return root, nil
}

// at is the first descendant along the path of local names, or nil.
func (n *node) at(path ...string) *node {
	for _, name := range path {
		if n == nil {
			return nil
		}
		var next *node
		for _, k := range n.kids {
			if k.local == name {
				next = k
				break
			}
		}
		n = next
	}
	return n
}

// all is every child named name of the element at path.
func (n *node) all(name string, path ...string) []*node {
	p := n.at(path...)
	if p == nil {
		return nil
	}
	var out []*node
	for _, k := range p.kids {
		if k.local == name {
			out = append(out, k)
		}
	}
	return out
}

// str is the text of the element at path with its surrounding space
// trimmed (the Schematron's normalize-space for "present"), "" when absent.
func (n *node) str(path ...string) string {
	e := n.at(path...)
	if e == nil {
		return ""
	}
	return strings.TrimSpace(e.text.String())
}

// raw is the text of the element at path as written.
func (n *node) raw(path ...string) string {
	e := n.at(path...)
	if e == nil {
		return ""
	}
	return e.text.String()
}

func (n *node) attr(name string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
