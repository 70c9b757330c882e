package render

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// executeTemplates renders a chart's templates with vals (what
// chartutil.ToRenderValues made of the values), as Helm v3's engine.Render
// does with no cluster (p nil) and engine.RenderWithClientProvider does with
// one: the same files, the same bytes, the same errors in the same words.
//
// Helm parses every template file of the chart on every render; a rollout
// renders thousands of pools with the same chart, and parsing was 40% of its
// time. Here each file's text is parsed once per process (parsedFile) and
// every render assembles the same set of templates from the parsed trees,
// with text/template's own calls in Helm's order, then executes it with its
// own functions. Parsing a text depends only on its name, its text and the
// function names (never on values), so a cached parse is the parse Helm
// would make.
func executeTemplates(chrt *chart.Chart, vals chartutil.Values, p engine.ClientProvider) (map[string]string, error) {
	return executeFiles(chartTemplates(chrt, vals), p)
}

// executeFiles parses (once) and executes the files chartTemplates listed.
func executeFiles(files map[string]templateFile, p engine.ClientProvider) (rendered map[string]string, err error) {
	// Helm's engine turns a panic while it parses or executes into its error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rendering template failed: %v", r)
		}
	}()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sortForParse(names)

	root, err := baseTemplate().Clone()
	if err != nil {
		return nil, err
	}
	root.Funcs(boundFuncs(root, p))
	for _, name := range names {
		pf := parsedFile(name, files[name].data)
		if pf.err != nil {
			return map[string]string{}, parseFailure(name, pf.err)
		}
		// As Template.Parse adds what it parsed: the file's own tree and
		// each tree it defines, under a template made for the file.
		file := root.New(name)
		for treeName, tree := range pf.trees {
			if _, err := file.AddParseTree(treeName, tree); err != nil {
				return map[string]string{}, parseFailure(name, err)
			}
		}
	}

	rendered = make(map[string]string, len(names))
	for _, name := range names {
		// Partials are only there to be included.
		if strings.HasPrefix(path.Base(name), "_") {
			continue
		}
		f := files[name]
		f.scope["Template"] = chartutil.Values{"Name": name, "BasePath": f.basePath}
		var out strings.Builder
		if err := root.ExecuteTemplate(&out, name, f.scope); err != nil {
			return map[string]string{}, executionFailure(name, err)
		}
		// missingkey=zero still prints "<no value>" for a missing key of a
		// map of interfaces; Helm removes it.
		rendered[name] = strings.ReplaceAll(out.String(), "<no value>", "")
	}
	return rendered, nil
}

// templateFile is one template of a chart or of one of its dependencies: its
// text, the context it executes with (shared by every file of its chart, as
// Helm shares it) and its chart's templates folder.
type templateFile struct {
	data     []byte
	scope    chartutil.Values
	basePath string
}

// chartTemplates lists the templates of chrt and its dependencies by their
// full path (chart/charts/dep/templates/x.yaml), each with the context its
// chart's templates see: a dependency sees its own section of its parent's
// values, a library chart contributes only its partials.
func chartTemplates(chrt *chart.Chart, vals chartutil.Values) map[string]templateFile {
	out := map[string]templateFile{}
	addChartTemplates(chrt, vals, out)
	return out
}

func addChartTemplates(c *chart.Chart, parent chartutil.Values, out map[string]templateFile) map[string]interface{} {
	subcharts := map[string]interface{}{}
	scope := map[string]interface{}{
		"Chart": struct {
			chart.Metadata
			IsRoot bool
		}{*c.Metadata, c.IsRoot()},
		"Files":        filesOf(c.Files),
		"Release":      parent["Release"],
		"Capabilities": parent["Capabilities"],
		"Values":       make(chartutil.Values),
		"Subcharts":    subcharts,
	}
	if c.IsRoot() {
		scope["Values"] = parent["Values"]
	} else if own, err := parent.Table("Values." + c.Name()); err == nil {
		scope["Values"] = own
	}
	for _, dep := range c.Dependencies() {
		subcharts[dep.Name()] = addChartTemplates(dep, scope, out)
	}
	library := strings.EqualFold(c.Metadata.Type, "library")
	prefix := c.ChartFullPath()
	for _, t := range c.Templates {
		if t == nil || library && !strings.HasPrefix(filepath.Base(t.Name), "_") {
			continue
		}
		out[path.Join(prefix, t.Name)] = templateFile{
			data:     t.Data,
			scope:    scope,
			basePath: path.Join(prefix, "templates"),
		}
	}
	return scope
}

// sortForParse orders template names as Helm parses and executes them: the
// deepest paths first, and among paths as deep, in reverse byte order. The
// order decides which definition of a named template wins and which failure
// a render reports.
func sortForParse(names []string) {
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return da > db
		}
		return a > b
	})
}

// parseFailure words a parse error as Helm does: the location and the last
// part of text/template's message.
func parseFailure(name string, err error) error {
	parts := strings.Split(err.Error(), ": ")
	if len(parts) == 1 {
		return fmt.Errorf("parse error in (%s): %s", name, err)
	}
	return fmt.Errorf("parse error at (%s): %s", parts[1], parts[len(parts)-1])
}

// executionFailure words an execution error as Helm does: a refusal (fail,
// required) as its location and its own message; any other error as
// text/template gave it.
func executionFailure(name string, err error) error {
	if _, ok := err.(template.ExecError); !ok {
		return err
	}
	parts := strings.SplitN(err.Error(), ": ", 3)
	if len(parts) != 3 {
		return fmt.Errorf("execution error in (%s): %s", name, err)
	}
	if m := refusalText.FindStringSubmatch(parts[2]); len(m) >= 2 {
		return fmt.Errorf("execution error at (%s): %s", parts[1], m[1])
	}
	return err
}

// baseTemplate is the empty template every render's set starts from, as
// Helm's starts: named "gotpl", missing keys printing their zero value,
// every function a chart may call.
var baseTemplate = sync.OnceValue(func() *template.Template {
	return template.New("gotpl").Option("missingkey=zero").Funcs(templateFuncs())
})

// parsed is one template file's text as text/template parsed it: the trees
// it holds (its own and those it defines), or the parse error.
type parsed struct {
	trees map[string]*parse.Tree
	err   error
}

// parseCache holds the parse of every template text a process renders,
// by template path, then text. Trees are never changed once parsed, so
// every render, at once, shares them.
var parseCache struct {
	sync.Mutex
	files map[string]map[string]*parsed
	bytes int
}

// maxParseCacheBytes bounds the texts the cache holds. The charts' templates
// are a few hundred kilobytes; a caller adding templates of its own text
// (a generated probe) must not make the cache grow without end, so past the
// bound the cache starts over.
const maxParseCacheBytes = 16 << 20

// parsedFile is the parse of a template file's text, from the cache or made
// now as Helm would make it (under its own name, with every function name).
func parsedFile(name string, data []byte) *parsed {
	parseCache.Lock()
	pf := parseCache.files[name][string(data)]
	parseCache.Unlock()
	if pf != nil {
		return pf
	}
	text := string(data)
	pf = &parsed{}
	scratch, err := baseTemplate().Clone()
	if err == nil {
		_, err = scratch.New(name).Parse(text)
	}
	if err != nil {
		pf.err = err
	} else {
		pf.trees = map[string]*parse.Tree{}
		for _, t := range scratch.Templates() {
			pf.trees[t.Name()] = t.Tree
		}
	}
	parseCache.Lock()
	defer parseCache.Unlock()
	if parseCache.files == nil || parseCache.bytes+len(name)+len(text) > maxParseCacheBytes {
		parseCache.files, parseCache.bytes = map[string]map[string]*parsed{}, 0
	}
	if parseCache.files[name] == nil {
		parseCache.files[name] = map[string]*parsed{}
	}
	if _, ok := parseCache.files[name][text]; !ok {
		parseCache.files[name][text] = pf
		parseCache.bytes += len(name) + len(text)
	}
	return pf
}

// includeDepth is how often a named template may be included inside itself
// before the render is refused, as Helm bounds it.
const includeDepth = 1000

// boundFuncs are the functions that belong to one render: include and tpl
// over its own set of templates, and lookup through its cluster when it has
// one. The count of includes in progress is the render's, shared with tpl.
func boundFuncs(set *template.Template, p engine.ClientProvider) template.FuncMap {
	including := map[string]int{}
	f := template.FuncMap{
		"include": includeIn(set, including),
		"tpl":     tplIn(set, including),
	}
	if p != nil {
		f["lookup"] = lookupIn(p)
	}
	return f
}

// includeIn is include over set: the named template's output, refused when
// it is already being included more than includeDepth times.
func includeIn(set *template.Template, including map[string]int) func(string, interface{}) (string, error) {
	return func(name string, data interface{}) (string, error) {
		if n, ok := including[name]; ok && n > includeDepth {
			return "", fmt.Errorf("rendering template has a nested reference name: %s: %w", name, errNestedInclude)
		}
		including[name]++
		var out strings.Builder
		err := set.ExecuteTemplate(&out, name, data)
		including[name]--
		return out.String(), err
	}
}

var errNestedInclude = errors.New("unable to execute template")

// tplIn is tpl over parent: the text parsed as a template of its own, in a
// copy of parent's set (so the text can include the chart's named templates
// and define its own without changing parent's), executed with data.
func tplIn(parent *template.Template, including map[string]int) func(string, interface{}) (string, error) {
	return func(text string, data interface{}) (string, error) {
		set, err := parent.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %w", err)
		}
		// Clone did not always keep the option; Helm sets it again.
		set.Option("missingkey=zero")
		set.Funcs(template.FuncMap{
			"include": includeIn(set, including),
			"tpl":     tplIn(set, including),
		})
		// A new template under the set's name, as Helm makes it: text of
		// only definitions still gets a template to execute.
		t, err := set.New(parent.Name()).Parse(text)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", text, err)
		}
		var out strings.Builder
		if err := t.Execute(&out, data); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
		}
		return strings.ReplaceAll(out.String(), "<no value>", ""), nil
	}
}

// lookupIn is Helm's lookup through p: one object by name, or a list when
// the name is empty (in the namespace when the kind is namespaced and one is
// given); NotFound answers an empty map, any other error ends the render.
func lookupIn(p engine.ClientProvider) func(string, string, string, string) (map[string]interface{}, error) {
	return func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
		c, namespaced, err := p.GetClientFor(apiVersion, kind)
		if err != nil {
			return map[string]interface{}{}, err
		}
		var client dynamic.ResourceInterface = c
		if namespaced && namespace != "" {
			client = c.Namespace(namespace)
		}
		var content map[string]interface{}
		if name != "" {
			obj, err := client.Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return lookupAnswer(err)
			}
			content = obj.UnstructuredContent()
		} else {
			list, err := client.List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return lookupAnswer(err)
			}
			content = list.UnstructuredContent()
		}
		return content, nil
	}
}

func lookupAnswer(err error) (map[string]interface{}, error) {
	if apierrors.IsNotFound(err) {
		return map[string]interface{}{}, nil
	}
	return map[string]interface{}{}, err
}
