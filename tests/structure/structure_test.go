// Package structure holds tests of the code's shape rather than its
// behaviour: inside each CLI package no file depends on a file that depends
// on it, the project's packages import each other in one direction only, and
// only internal/apply writes to a cluster (writes_test.go).
package structure

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/cozystack/golden-worker-images"

// fileCheckedPackages are the packages whose non-test files must form an
// acyclic graph: the CLI and the libraries it was split into (issue 31).
var fileCheckedPackages = []string{
	"./cmd/workerimage",
	"./internal/report",
	"./internal/rollout",
	"./internal/output",
	"./internal/fleet",
	"./internal/golden",
	"./internal/render",
	"./internal/apply",
}

// layer ranks every product package; a package may import only packages of
// a strictly lower rank. golden and render are leaves; fleet reads the
// cluster; report answers the questions; rollout plans a move on report's
// answers; output prints reports and plans, apply writes what a rollout
// planned; cmd wires flags to them.
var layer = map[string]int{
	module + "/internal/golden":        0,
	module + "/internal/render":        0,
	module + "/internal/render/helmv4": 1,
	module + "/internal/orderedjson":   0,
	module + "/internal/rdschema":      1,
	module + "/internal/rdschema/gen":  2,
	module + "/internal/fleet":         1,
	module + "/internal/report":        2,
	module + "/internal/rollout":       3,
	module + "/internal/output":        4,
	module + "/internal/apply":         4,
	module + "/cmd/workerimage":        5,
}

// knownFileCycles lists file cycles accepted on purpose, keyed by package
// import path, each with the reason; empty means none is tolerated.
var knownFileCycles = map[string]string{}

// listedPackage is the part of `go list -json` this test reads.
type listedPackage struct {
	ImportPath string
	Dir        string
	Name       string
	GoFiles    []string
	Export     string
	Imports    []string
	Standard   bool
}

func goList(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = repoRoot(t)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", dir, err)
	}
	return dir
}

// edge is one file's dependency on another, with one identifier that
// causes it (the first in source order) so a failure names what to move.
type edge struct {
	to    string
	ident string
	pos   token.Position
}

// fileGraph type-checks one package and returns, for each file, the other
// files of the same package whose declarations it uses: package-level
// funcs, types, vars and consts, methods and struct fields alike. Locals
// cannot cross files, so "declared in another file of this package" is the
// whole test.
func fileGraph(fset *token.FileSet, path string, files []*ast.File, imp types.Importer) (map[string][]edge, error) {
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(path, fset, files, info)
	if err != nil {
		return nil, err
	}
	graph := map[string][]edge{}
	seen := map[[2]string]bool{}
	idents := make([]*ast.Ident, 0, len(info.Uses))
	for id := range info.Uses {
		idents = append(idents, id)
	}
	sort.Slice(idents, func(i, j int) bool { return idents[i].Pos() < idents[j].Pos() })
	for _, f := range files {
		graph[fset.Position(f.Pos()).Filename] = nil
	}
	for _, id := range idents {
		obj := info.Uses[id]
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := fset.Position(id.Pos()).Filename
		to := fset.Position(obj.Pos()).Filename
		if from == to || seen[[2]string{from, to}] {
			continue
		}
		seen[[2]string{from, to}] = true
		graph[from] = append(graph[from], edge{to: to, ident: describe(obj), pos: fset.Position(id.Pos())})
	}
	return graph, nil
}

// describe names an object as a reader would look it up: T.M for methods.
func describe(obj types.Object) string {
	if fn, ok := obj.(*types.Func); ok {
		if recv := fn.Signature().Recv(); recv != nil {
			return types.TypeString(recv.Type(), func(*types.Package) string { return "" }) + "." + fn.Name()
		}
	}
	if v, ok := obj.(*types.Var); ok && v.IsField() {
		return "field " + v.Name()
	}
	return obj.Name()
}

// fileCycles returns one line per strongly connected component of more
// than one file: a shortest cycle through it, each step naming the
// identifier that makes it.
func fileCycles(graph map[string][]edge) []string {
	nodes := make([]string, 0, len(graph))
	for n := range graph {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)

	// Tarjan's algorithm.
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var comps [][]string
	next := 0
	var visit func(n string)
	visit = func(n string) {
		index[n], low[n] = next, next
		next++
		stack = append(stack, n)
		onStack[n] = true
		for _, e := range graph[n] {
			if _, ok := index[e.to]; !ok {
				visit(e.to)
				low[n] = min(low[n], low[e.to])
			} else if onStack[e.to] {
				low[n] = min(low[n], index[e.to])
			}
		}
		if low[n] == index[n] {
			var comp []string
			for {
				m := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[m] = false
				comp = append(comp, m)
				if m == n {
					break
				}
			}
			comps = append(comps, comp)
		}
	}
	for _, n := range nodes {
		if _, ok := index[n]; !ok {
			visit(n)
		}
	}

	var out []string
	for _, comp := range comps {
		if len(comp) < 2 {
			continue
		}
		sort.Strings(comp)
		out = append(out, describeCycle(graph, comp))
	}
	sort.Strings(out)
	return out
}

// describeCycle finds, by breadth-first search inside the component, the
// shortest way from its first file back to itself.
func describeCycle(graph map[string][]edge, comp []string) string {
	in := map[string]bool{}
	for _, n := range comp {
		in[n] = true
	}
	start := comp[0]
	type step struct {
		from string
		e    edge
	}
	prev := map[string]step{}
	queue := []string{start}
	visited := map[string]bool{}
	var last step
	found := false
	for len(queue) > 0 && !found {
		n := queue[0]
		queue = queue[1:]
		for _, e := range graph[n] {
			if !in[e.to] {
				continue
			}
			if e.to == start {
				last, found = step{n, e}, true
				break
			}
			if !visited[e.to] {
				visited[e.to] = true
				prev[e.to] = step{n, e}
				queue = append(queue, e.to)
			}
		}
	}
	var steps []step
	for s := last; ; s = prev[s.from] {
		steps = append([]step{s}, steps...)
		if s.from == start {
			break
		}
	}
	var b strings.Builder
	names := make([]string, len(comp))
	for i, n := range comp {
		names[i] = filepath.Base(n)
	}
	fmt.Fprintf(&b, "files %s depend on each other: %s", strings.Join(names, ", "), filepath.Base(start))
	for _, s := range steps {
		fmt.Fprintf(&b, " -(%s at %s:%d)-> %s", s.e.ident, filepath.Base(s.e.pos.Filename), s.e.pos.Line, filepath.Base(s.e.to))
	}
	return b.String()
}

// parsePackage parses a listed package's non-test files, with an importer
// reading the export data go list built.
func parsePackage(t *testing.T, p listedPackage, exports map[string]string) (*token.FileSet, []*ast.File, types.Importer) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files, exportImporter(fset, exports)
}

// exportImporter imports packages from the export data go list -export built.
func exportImporter(fset *token.FileSet, exports map[string]string) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file := exports[path]
		if file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

// TestFilesDependOneWay fails when any two non-test files of a CLI package
// depend on each other, directly or through other files.
func TestFilesDependOneWay(t *testing.T) {
	pkgs := goList(t, append([]string{"-export", "-deps"}, fileCheckedPackages...)...)
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	byPath := map[string]listedPackage{}
	for _, p := range goList(t, fileCheckedPackages...) {
		byPath[p.ImportPath] = p
	}
	for _, rel := range fileCheckedPackages {
		path := module + strings.TrimPrefix(rel, ".")
		p, ok := byPath[path]
		if !ok {
			t.Fatalf("go list did not report %s", path)
		}
		t.Run(strings.TrimPrefix(rel, "./"), func(t *testing.T) {
			fset, files, imp := parsePackage(t, p, exports)
			graph, err := fileGraph(fset, path, files, imp)
			if err != nil {
				t.Fatalf("type-checking %s: %v", path, err)
			}
			edges := 0
			for _, es := range graph {
				edges += len(es)
			}
			t.Logf("%d files, %d cross-file dependencies", len(files), edges)
			// Files of one package that use nothing of each other would mean
			// the type-checker's uses were not seen, not a clean package.
			if len(files) > 1 && edges == 0 {
				t.Fatalf("%s: no dependency found between its %d files; the graph builder is broken", path, len(files))
			}
			cycles := fileCycles(graph)
			if why, ok := knownFileCycles[path]; ok {
				if len(cycles) == 0 {
					t.Errorf("%s is listed in knownFileCycles (%s) but has no file cycle: remove the entry", path, why)
				}
				return
			}
			for _, c := range cycles {
				t.Errorf("%s: %s; move the shared declaration into the file both use, or to the file that only others depend on", path, c)
			}
		})
	}
}

// TestPackagesImportDownward fails when a product package imports one of
// the same or a higher layer, or a project package the layers do not know
// (a test-support package, say).
func TestPackagesImportDownward(t *testing.T) {
	pkgs := goList(t, "./cmd/...", "./internal/...")
	if len(pkgs) == 0 {
		t.Fatal("go list found no product packages")
	}
	for _, p := range pkgs {
		from, ok := layer[p.ImportPath]
		if !ok {
			t.Errorf("%s has no layer: add it to the layer map in this test, below the packages that import it", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to, ok := layer[imp]
			if !ok {
				t.Errorf("%s imports %s, which is not a product package", p.ImportPath, imp)
				continue
			}
			if to >= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must run from cmd to output to report to fleet to golden/render, never back", p.ImportPath, from, imp, to)
			}
		}
	}
}

// parseSources parses in-memory files for the finder's own tests.
func parseSources(t *testing.T, srcs map[string]string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	names := make([]string, 0, len(srcs))
	for n := range srcs {
		names = append(names, n)
	}
	sort.Strings(names)
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, n, srcs[n], parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// TestFileCyclesFinder proves the finder can fail: calls, method calls and
// field uses across files each make an edge, and only a loop is reported.
func TestFileCyclesFinder(t *testing.T) {
	cases := []struct {
		name string
		srcs map[string]string
		want []string
	}{{
		name: "two files calling each other",
		srcs: map[string]string{
			"a.go": "package p\n\nfunc A() int { return B() }\n",
			"b.go": "package p\n\nfunc B() int {\n\tif false {\n\t\treturn A()\n\t}\n\treturn 1\n}\n",
		},
		want: []string{"files a.go, b.go depend on each other: a.go -(B at a.go:3)-> b.go -(A at b.go:5)-> a.go"},
	}, {
		name: "one file calling the other",
		srcs: map[string]string{
			"a.go": "package p\n\nfunc A() int { return B() }\n",
			"b.go": "package p\n\nfunc B() int { return 1 }\n",
		},
	}, {
		name: "method declared away from its type, called back",
		srcs: map[string]string{
			"t.go": "package p\n\ntype T struct{ n int }\n\nfunc use(t T) int { return t.Double() }\n",
			"m.go": "package p\n\nfunc (t T) Double() int { return 2 * t.n }\n",
		},
		want: []string{"files m.go, t.go depend on each other: m.go -(T at m.go:3)-> t.go -(T.Double at t.go:5)-> m.go"},
	}, {
		name: "a field filled in another file, one way",
		srcs: map[string]string{
			"types.go": "package p\n\ntype Facts struct{ Pools []string }\n",
			"fill.go":  "package p\n\nfunc fill() Facts { var f Facts; f.Pools = nil; return f }\n",
		},
	}, {
		name: "three files in a ring, a fourth outside",
		srcs: map[string]string{
			"a.go": "package p\n\nfunc A() { B() }\n",
			"b.go": "package p\n\nfunc B() { C() }\n",
			"c.go": "package p\n\nfunc C() { _ = D; A() }\n",
			"d.go": "package p\n\nconst D = \"x\"\n",
		},
		want: []string{"files a.go, b.go, c.go depend on each other: a.go -(B at a.go:3)-> b.go -(C at b.go:3)-> c.go -(A at c.go:3)-> a.go"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fset, files := parseSources(t, tc.srcs)
			graph, err := fileGraph(fset, "example.com/p", files, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := fileCycles(graph)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("cycles:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
