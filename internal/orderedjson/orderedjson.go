// Package orderedjson reads and writes JSON objects keeping their members'
// order (and, with json.Decoder.UseNumber, each number's text), so a file
// rewritten by a program reads as the file did: a chart's values schema is
// both read by people and compared byte for byte.
package orderedjson

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Object is a JSON object whose members keep the order they were read or
// set in.
type Object struct{ Members []Member }

// Member is one key of an Object and its value.
type Member struct {
	Key   string
	Value any
}

// Get is the value of key k; nil when the object has no such key.
func (o *Object) Get(k string) any {
	v, _ := o.Lookup(k)
	return v
}

// Lookup is the value of key k, and whether the object has it.
func (o *Object) Lookup(k string) (any, bool) {
	for _, m := range o.Members {
		if m.Key == k {
			return m.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of key k where it stands, or appends it.
func (o *Object) Set(k string, v any) {
	for i, m := range o.Members {
		if m.Key == k {
			o.Members[i].Value = v
			return
		}
	}
	o.Members = append(o.Members, Member{k, v})
}

// Delete removes key k, if the object has it.
func (o *Object) Delete(k string) {
	for i, m := range o.Members {
		if m.Key == k {
			o.Members = append(o.Members[:i], o.Members[i+1:]...)
			return
		}
	}
}

// MarshalJSON writes the members in order, without HTML escaping.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.Members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		v, err := Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Marshal writes v as JSON as MarshalJSON writes an object: no HTML
// escaping, no trailing newline.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Decode reads one JSON value from dec, each object as an *Object.
func Decode(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := Decode(dec)
				if err != nil {
					return nil, err
				}
				o.Members = append(o.Members, Member{k.(string), v})
			}
			_, err := dec.Token()
			return o, err
		case '[':
			l := []any{}
			for dec.More() {
				v, err := Decode(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}
