package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// yamlMap is a mapping of alternating keys and nodes (a string key each).
func yamlMap(flow bool, kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	if flow {
		m.Style = yaml.FlowStyle
	}
	for i := 0; i < len(kv); i += 2 {
		m.Content = append(m.Content, yamlString(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}

// yamlString is s as a string scalar that reads back as s under YAML 1.1
// (Helm reads values with sigs.k8s.io/yaml, a YAML 1.1 reader: yes, on, 0b101,
// 1_000 are not strings there) and YAML 1.2 readers: plain where both read the
// plain form back as s, in a block and in a flow collection, double-quoted
// otherwise.
func yamlString(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if !plainReadsBack(n) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func plainReadsBack(n *yaml.Node) bool {
	for _, doc := range []*yaml.Node{
		yamlMapNoCheck("k", n),
		yamlMapNoCheck("k", &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{n}}),
	} {
		text, err := yaml.Marshal(doc)
		if err != nil {
			return false
		}
		var v11 map[string]any
		if err := sigsyaml.Unmarshal(text, &v11); err != nil || !readsAs(v11["k"], n.Value) {
			return false
		}
		var v12 map[string]any
		if err := yaml.Unmarshal(text, &v12); err != nil || !readsAs(v12["k"], n.Value) {
			return false
		}
	}
	return true
}

func yamlMapNoCheck(key string, value *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, value}}
}

// readsAs: v is s, or a one-item list holding s.
func readsAs(v any, s string) bool {
	if l, ok := v.([]any); ok && len(l) == 1 {
		v = l[0]
	}
	got, ok := v.(string)
	return ok && got == s
}

// yamlComment is comment lines as YAML takes them: each escaped as the text
// reports are (TermSafe), so no string ends the comment and starts data.
func yamlComment(lines []string) string {
	safe := make([]string, len(lines))
	for i, l := range lines {
		safe[i] = TermSafe(l)
	}
	return strings.Join(safe, "\n")
}

// yamlText writes a document with 2-space indentation.
func yamlText(doc *yaml.Node) string {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(doc)
	_ = enc.Close()
	return b.String()
}

// valuesNode is values as a YAML mapping, keys sorted, strings written as
// yamlString writes them; an empty mapping for none.
func valuesNode(values map[string]any) *yaml.Node {
	if values != nil {
		if raw, err := json.Marshal(values); err == nil {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if n, err := jsonNode(dec); err == nil && n.Kind == yaml.MappingNode {
				n.Style = 0
				return n
			}
		}
	}
	return &yaml.Node{Kind: yaml.MappingNode}
}

// jsonNode reads the next JSON value of dec as a YAML node, keeping the
// order of object keys: collections in block style, strings as yamlString
// writes them, numbers as written, true, false and null plain.
func jsonNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		if tok == '{' {
			n.Kind = yaml.MappingNode
		}
		for dec.More() {
			if n.Kind == yaml.MappingNode {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, yamlString(fmt.Sprint(key)))
			}
			child, err := jsonNode(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, child)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle // {} and []
		}
		return n, nil
	case string:
		return yamlString(tok), nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(tok.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: tok.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(tok)}, nil
	default:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
}
