package fakeyt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A partial answer, as the upstream's fields= asks for one: a comma list
// of paths (a/b is b inside a), each maybe followed by a parenthesised
// list that selects inside it (items(id,snippet(title))); * is every
// field of an object. Arrays are selected through: items/id is the id of
// every item. An object left empty by the selection is left out, as the
// upstream leaves it. The call is charged as any other, whatever it
// selects; a selection that does not parse is 400 invalidParameter.

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

// prune writes the JSON value body holds, cut to sel, keeping its order.
// The answer itself is written even when the selection leaves it empty.
func prune(body []byte, sel selection) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var out bytes.Buffer
	kept, err := pruneValue(dec, sel, &out, false)
	if err != nil {
		return nil, err
	}
	if !kept {
		return []byte("{}"), nil
	}
	return out.Bytes(), nil
}

// pruneValue writes the next value of dec cut to sel, and says whether it
// wrote one: a scalar has nothing inside to select, and an object left
// empty is left out, but for an array's element, which stays as {} so
// that the array keeps its length.
func pruneValue(dec *json.Decoder, sel selection, out *bytes.Buffer, element bool) (bool, error) {
	if sel == nil {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return false, err
		}
		out.Write(raw)
		return true, nil
	}
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch tok {
	case json.Delim('{'):
		kept, err := pruneObject(dec, sel, out)
		if err == nil && !kept && element {
			out.WriteString("{}")
			kept = true
		}
		return kept, err
	case json.Delim('['):
		out.WriteByte('[')
		for n := 0; dec.More(); {
			var v bytes.Buffer
			kept, err := pruneValue(dec, sel, &v, true)
			if err != nil {
				return false, err
			}
			if kept {
				if n > 0 {
					out.WriteByte(',')
				}
				n++
				out.Write(v.Bytes())
			}
		}
		out.WriteByte(']')
		_, err := dec.Token()
		return true, err
	}
	return false, nil
}

// pruneObject writes the rest of an object, its '{' read, cut to sel; an
// object left empty is not written.
func pruneObject(dec *json.Decoder, sel selection, out *bytes.Buffer) (bool, error) {
	var obj bytes.Buffer
	obj.WriteByte('{')
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false, err
		}
		key := tok.(string)
		sub, keep := sel.pick(key)
		if !keep {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return false, err
			}
			continue
		}
		var v bytes.Buffer
		if kept, err := pruneValue(dec, sub, &v, false); err != nil || !kept {
			if err != nil {
				return false, err
			}
			continue
		}
		if n > 0 {
			obj.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(key)
		obj.Write(k)
		obj.WriteByte(':')
		obj.Write(v.Bytes())
	}
	obj.WriteByte('}')
	if _, err := dec.Token(); err != nil {
		return false, err
	}
	if n == 0 {
		return false, nil
	}
	out.Write(obj.Bytes())
	return true, nil
}

// errFields is the upstream's answer to a fields= it cannot read.
func errFields(fields string, err error) *apiError {
	e := newError(400, "INVALID_ARGUMENT", "global", "invalidParameter", fmt.Sprintf("Invalid field selection %s: %v", fields, err))
	e.Error.Errors[0].Location, e.Error.Errors[0].LocationType = "fields", "parameter"
	return e
}
