package fakeyt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A partial answer, as the upstream's fields= asks for one: a comma list
// of paths (a/b is b inside a), each maybe followed by a parenthesised
// list that selects inside it (items(id,snippet(title))); * is every
// field of an object. Arrays are selected through: items/id is the id of
// every item. An object the selection leaves empty is left out, and so is
// a scalar asked for a field inside it; an array's element stays, as {},
// so that the array keeps its length (both unconfirmed against the
// upstream). The call is charged as any other, whatever it selects; a
// selection that does not parse is 400 invalidParameter.

// selection is what a fields= keeps of an object: each name's own
// selection, nil for the whole value.
type selection map[string]selection

// parseFields reads a fields= value.
func parseFields(s string) (selection, error) {
	p := &fieldsParser{s: s}
	sel := selection{}
	if err := p.list(sel); err != nil {
		return nil, err
	}
	if p.i < len(s) {
		return nil, fmt.Errorf("unexpected %q at %d", s[p.i], p.i)
	}
	return sel, nil
}

type fieldsParser struct {
	s string
	i int
}

// list reads path[(list)] {, path[(list)]} into sel.
func (p *fieldsParser) list(sel selection) error {
	for {
		if err := p.field(sel); err != nil {
			return err
		}
		if p.i >= len(p.s) || p.s[p.i] != ',' {
			return nil
		}
		p.i++
	}
}

// field reads one path and what follows it into sel.
func (p *fieldsParser) field(sel selection) error {
	var steps []string
	for {
		name := p.name()
		if name == "" {
			return fmt.Errorf("a field name expected at %d", p.i)
		}
		steps = append(steps, name)
		if p.i >= len(p.s) || p.s[p.i] != '/' {
			break
		}
		p.i++
	}
	var sub selection
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		sub = selection{}
		if err := p.list(sub); err != nil {
			return err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return fmt.Errorf("')' expected at %d", p.i)
		}
		p.i++
	}
	sel.add(steps, sub)
	return nil
}

// name reads a field's name: letters, digits and _, or * alone.
func (p *fieldsParser) name() string {
	start := p.i
	for p.i < len(p.s) && isNameByte(p.s[p.i]) {
		p.i++
	}
	if name := p.s[start:p.i]; name == "*" || !strings.Contains(name, "*") {
		return name
	}
	p.i = start
	return ""
}

func isNameByte(c byte) bool {
	return c == '_' || c == '*' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// add selects the path steps, and sub within it (nil: all of it). A whole
// value already asked for stays whole.
func (sel selection) add(steps []string, sub selection) {
	name := steps[0]
	cur, seen := sel[name]
	if seen && cur == nil {
		return
	}
	if len(steps) == 1 && sub == nil {
		sel[name] = nil
		return
	}
	if cur == nil {
		cur = selection{}
		sel[name] = cur
	}
	if len(steps) > 1 {
		cur.add(steps[1:], sub)
		return
	}
	for k, v := range sub {
		cur.add([]string{k}, v)
	}
}

// pick is name's selection in sel, and whether sel keeps it at all.
func (sel selection) pick(name string) (selection, bool) {
	if sub, ok := sel[name]; ok {
		return sub, true
	}
	sub, ok := sel["*"]
	return sub, ok
}

// keepsWhole says whether sel keeps the value at path whole, as prune
// writes it: nil keeps everything, and a selection inside a scalar keeps
// none of it.
func (sel selection) keepsWhole(path ...string) bool {
	for _, name := range path {
		if sel == nil {
			return true
		}
		sub, ok := sel.pick(name)
		if !ok {
			return false
		}
		sel = sub
	}
	return sel == nil
}

// pickRaw is pick of a key as the answer spells it, quoted.
func (sel selection) pickRaw(raw []byte) (selection, bool, error) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false, errCut
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		if sub, ok := sel[string(raw[1:len(raw)-1])]; ok {
			return sub, true, nil
		}
		sub, ok := sel["*"]
		return sub, ok, nil
	}
	var key string
	if err := json.Unmarshal(raw, &key); err != nil {
		return nil, false, err
	}
	sub, ok := sel.pick(key)
	return sub, ok, nil
}

// prune writes the JSON value body holds, cut to sel, keeping its order.
// The answer itself is written even when the selection leaves it empty.
// It copies what is kept as it stands and steps over the rest, decoding
// nothing: a partial answer costs the fake less than the whole one.
func prune(body []byte, sel selection) ([]byte, error) {
	p := &pruner{b: body, out: make([]byte, 0, len(body)/2)}
	kept, err := p.value(sel, false)
	if err != nil {
		return nil, err
	}
	if !kept {
		return []byte("{}"), nil
	}
	return p.out, nil
}

// pruner walks a JSON text the fake encoded, b from i, writing out.
type pruner struct {
	b   []byte
	i   int
	out []byte
}

var errCut = errors.New("the answer ends inside a value")

// value writes the next value cut to sel, and says whether it wrote one:
// a scalar has nothing inside to select, and an object left empty is left
// out, but for an array's element, which stays as {} so that the array
// keeps its length.
func (p *pruner) value(sel selection, element bool) (bool, error) {
	p.space()
	if p.i >= len(p.b) {
		return false, errCut
	}
	if sel == nil {
		start := p.i
		if err := p.skip(); err != nil {
			return false, err
		}
		p.out = append(p.out, p.b[start:p.i]...)
		return true, nil
	}
	switch p.b[p.i] {
	case '{':
		return p.object(sel, element)
	case '[':
		return true, p.array(sel)
	}
	return false, p.skip()
}

func (p *pruner) object(sel selection, element bool) (bool, error) {
	mark, n := len(p.out), 0
	p.out = append(p.out, '{')
	p.i++
	for {
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			break
		}
		start := p.i
		if err := p.skip(); err != nil {
			return false, err
		}
		rawKey := p.b[start:p.i]
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false, errCut
		}
		p.i++
		sub, keep, err := sel.pickRaw(rawKey)
		if err != nil {
			return false, err
		}
		before := len(p.out)
		if n > 0 {
			p.out = append(p.out, ',')
		}
		p.out = append(append(p.out, rawKey...), ':')
		kept := false
		if keep {
			kept, err = p.value(sub, false)
		} else {
			err = p.skip()
		}
		if err != nil {
			return false, err
		}
		if kept {
			n++
		} else {
			p.out = p.out[:before]
		}
		if !p.next('}') {
			break
		}
	}
	if n == 0 {
		p.out = p.out[:mark]
		if element {
			p.out = append(p.out, "{}"...)
		}
		return element, nil
	}
	p.out = append(p.out, '}')
	return true, nil
}

func (p *pruner) array(sel selection) error {
	p.out = append(p.out, '[')
	p.i++
	for n := 0; ; {
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			break
		}
		before := len(p.out)
		if n > 0 {
			p.out = append(p.out, ',')
		}
		kept, err := p.value(sel, true)
		if err != nil {
			return err
		}
		if kept {
			n++
		} else {
			p.out = p.out[:before]
		}
		if !p.next(']') {
			break
		}
	}
	p.out = append(p.out, ']')
	return nil
}

// next steps over the comma after a member and says whether another
// follows, or over the closing end and says none does.
func (p *pruner) next(end byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ',' {
		p.i++
		return true
	}
	if p.i < len(p.b) && p.b[p.i] == end {
		p.i++
	}
	return false
}

func (p *pruner) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

// skip steps over one value.
func (p *pruner) skip() error {
	p.space()
	depth := 0
	for p.i < len(p.b) {
		switch c := p.b[p.i]; c {
		case '"':
			if err := p.str(); err != nil {
				return err
			}
		case '{', '[':
			depth++
			p.i++
		case '}', ']':
			if depth == 0 {
				return nil
			}
			depth--
			p.i++
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return nil
			}
			p.i++
		default:
			p.i++
		}
		if depth == 0 && p.i > 0 && (p.b[p.i-1] == '"' || p.b[p.i-1] == '}' || p.b[p.i-1] == ']') {
			return nil
		}
	}
	if depth > 0 {
		return errCut
	}
	return nil
}

// str steps over the string at i, to its closing quote: the next quote
// that no odd run of backslashes escapes, found a quote at a time by
// bytes.IndexByte rather than a byte at a time, as strings are most of an
// answer's bytes.
func (p *pruner) str() error {
	p.i++ // the opening quote
	for {
		j := bytes.IndexByte(p.b[p.i:], '"')
		if j < 0 {
			p.i = len(p.b)
			return errCut
		}
		q, escapes := p.i+j, 0
		for q-1-escapes >= p.i && p.b[q-1-escapes] == '\\' {
			escapes++
		}
		p.i = q + 1
		if escapes%2 == 0 {
			return nil
		}
	}
}

// errFields is the upstream's answer to a fields= it cannot read, or one
// naming a field its answer does not hold: what names the fault.
func errFields(what string) *apiError {
	e := newError(400, "INVALID_ARGUMENT", "global", "invalidParameter", "Invalid field selection "+what)
	e.Error.Errors[0].Location, e.Error.Errors[0].LocationType = "fields", "parameter"
	return e
}
