package render

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path"
	"regexp"
	"strings"
	"text/template"

	"github.com/BurntSushi/toml"
	"github.com/Masterminds/sprig/v3"
	"github.com/gobwas/glob"
	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v3"
)

// The functions a template calls, as Helm v3's engine (helm.sh/helm/v3/pkg/engine)
// gives them to a chart installed for real: no lint mode, no DNS, no strict
// mode. Each behaves as Helm's does, errors and all; the render-bound ones
// (include, tpl, lookup against a cluster) are bound per render by
// boundFuncs.

// A refusal (fail, required) travels through text/template's error between
// these markers, and Helm's message for the render is the text between them.
const (
	refusalStart = "HELM_ERR_START"
	refusalEnd   = "HELM_ERR_END"
)

// refusalText finds a refusal in an execution error's message: from the first
// start marker to the last end marker, as Helm reads it.
var refusalText = regexp.MustCompile(refusalStart + `((?s).*)` + refusalEnd)

func refusal(msg string) error { return errors.New(refusalStart + msg + refusalEnd) }

// templateFuncs is every function name a chart may call, with the behaviour
// that does not depend on the render. Parsing reads only the names, so one
// map serves every render; include, tpl and (with a cluster) lookup are
// replaced by each render's own.
func templateFuncs() template.FuncMap {
	f := sprig.TxtFuncMap()
	// Helm keeps the process environment out of templates.
	delete(f, "env")
	delete(f, "expandenv")
	helm := template.FuncMap{
		"toToml":        tomlText,
		"fromToml":      tomlMap,
		"toYaml":        yamlText,
		"toYamlPretty":  yamlTextIndented,
		"fromYaml":      yamlMap,
		"fromYamlArray": yamlList,
		"toJson":        jsonText,
		"fromJson":      jsonMap,
		"fromJsonArray": jsonList,
		"required":      required,
		"fail":          func(msg string) (string, error) { return "", refusal(msg) },
		// DNS is off, as in every Helm install without --enable-dns.
		"getHostByName": func(string) string { return "" },
		// No cluster: every lookup answers an empty map, as `helm template` does.
		"lookup": func(string, string, string, string) (map[string]interface{}, error) {
			return map[string]interface{}{}, nil
		},
		// Bound per render (boundFuncs); named here so templates parse.
		"include": func(string, interface{}) (string, error) { return "", nil },
		"tpl":     func(string, interface{}) (string, error) { return "", nil },
	}
	for name, fn := range helm {
		f[name] = fn
	}
	return f
}

// required refuses nil and the empty string, and passes anything else through.
func required(msg string, val interface{}) (interface{}, error) {
	if s, isString := val.(string); val == nil || isString && s == "" {
		return val, refusal(msg)
	}
	return val, nil
}

// The conversions swallow their errors as Helm's do: text comes out empty
// (TOML: the error's text), a parsed map carries the error under "Error", a
// parsed list is the error's text alone.

func yamlText(v interface{}) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func yamlTextIndented(v interface{}) string {
	var out bytes.Buffer
	enc := goyaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(out.String(), "\n")
}

func yamlMap(text string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func yamlList(text string) []interface{} {
	l := []interface{}{}
	if err := yaml.Unmarshal([]byte(text), &l); err != nil {
		l = []interface{}{err.Error()}
	}
	return l
}

func tomlText(v interface{}) string {
	var out bytes.Buffer
	if err := toml.NewEncoder(&out).Encode(v); err != nil {
		return err.Error()
	}
	return out.String()
}

func tomlMap(text string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := toml.Unmarshal([]byte(text), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func jsonText(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func jsonMap(text string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func jsonList(text string) []interface{} {
	l := []interface{}{}
	if err := json.Unmarshal([]byte(text), &l); err != nil {
		l = []interface{}{err.Error()}
	}
	return l
}

// chartFiles is a chart's .Files: its files other than templates and the
// chart's own metadata, by path, with the methods Helm gives templates.
type chartFiles map[string][]byte

func filesOf(from []*chart.File) chartFiles {
	out := make(chartFiles, len(from))
	for _, f := range from {
		out[f.Name] = f.Data
	}
	return out
}

// GetBytes is a file's bytes; a missing file is empty.
func (f chartFiles) GetBytes(name string) []byte {
	if data, ok := f[name]; ok {
		return data
	}
	return []byte{}
}

// Get is a file's text; a missing file is empty.
func (f chartFiles) Get(name string) string { return string(f.GetBytes(name)) }

// Glob is the files whose path matches pattern ('/' separates); a pattern
// that does not compile matches every file.
func (f chartFiles) Glob(pattern string) chartFiles {
	g, err := glob.Compile(pattern, '/')
	if err != nil {
		g, _ = glob.Compile("**")
	}
	out := filesOf(nil)
	for name, data := range f {
		if g.Match(name) {
			out[name] = data
		}
	}
	return out
}

// AsConfig is the files as a ConfigMap's data: base name to text, as YAML.
func (f chartFiles) AsConfig() string {
	if f == nil {
		return ""
	}
	m := map[string]string{}
	for name, data := range f {
		m[path.Base(name)] = string(data)
	}
	return yamlText(m)
}

// AsSecrets is the files as a Secret's data: base name to base64, as YAML.
func (f chartFiles) AsSecrets() string {
	if f == nil {
		return ""
	}
	m := map[string]string{}
	for name, data := range f {
		m[path.Base(name)] = base64.StdEncoding.EncodeToString(data)
	}
	return yamlText(m)
}

// Lines is a file's lines, without the newline that ends the last one.
func (f chartFiles) Lines(name string) []string {
	if f == nil || len(f[name]) == 0 {
		return []string{}
	}
	text := strings.TrimSuffix(string(f[name]), "\n")
	return strings.Split(text, "\n")
}
