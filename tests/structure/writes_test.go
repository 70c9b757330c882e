package structure

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strings"
	"testing"
)

// writer is the one product package that writes to a cluster: the
// reports read, and only internal/apply patches what a report planned.
const writer = module + "/internal/apply"

// writingImports are client packages whose purpose is writing to a
// cluster: Helm's actions and kube client, the typed clientset,
// controller-runtime's client, cli-runtime's resource helper.
var writingImports = []string{
	"helm.sh/helm/v3/pkg/action",
	"helm.sh/helm/v4/pkg/action",
	"helm.sh/helm/v3/pkg/kube",
	"helm.sh/helm/v4/pkg/kube",
	"k8s.io/client-go/kubernetes",
	"sigs.k8s.io/controller-runtime/pkg/client",
	"k8s.io/cli-runtime/pkg/resource",
}

// writeMethods are the methods of a cluster client that change objects;
// restWriteMethods the verbs of a raw REST client that do.
var (
	writeMethods     = []string{"Create", "Update", "UpdateStatus", "Patch", "Apply", "ApplyStatus", "Delete", "DeleteCollection"}
	restWriteMethods = []string{"Post", "Put", "Patch", "Delete"}
)

// clientPackages are where a cluster client's methods are declared.
var clientPackages = []string{"k8s.io/client-go/", "k8s.io/cli-runtime/", "sigs.k8s.io/controller-runtime/", "helm.sh/helm/"}

// writeCalls lists, as "file:line: pkg.Type.Method", each call in files of
// a method that writes to a cluster: a client's Create, Update, Patch,
// Delete (and their kin), a REST client's Post, Put, Patch, Delete.
func writeCalls(fset *token.FileSet, path string, files []*ast.File, imp types.Importer) ([]string, error) {
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(path, fset, files, info); err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			fn, ok := info.Uses[sel.Sel].(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Signature().Recv() == nil {
				return true
			}
			pkg := fn.Pkg().Path()
			client := slices.ContainsFunc(clientPackages, func(prefix string) bool { return strings.HasPrefix(pkg, prefix) })
			writes := slices.Contains(writeMethods, fn.Name()) || (pkg == "k8s.io/client-go/rest" && slices.Contains(restWriteMethods, fn.Name()))
			if client && writes {
				pos := fset.Position(call.Pos())
				out = append(out, fmt.Sprintf("%s:%d: %s.%s", pos.Filename, pos.Line, pkg, describe(fn)))
			}
			return true
		})
	}
	sort.Strings(out)
	return out, nil
}

// TestOnlyApplyWrites fails when a product package other than
// internal/apply imports a client whose purpose is writing to a cluster, or
// calls a method of a cluster client that writes; and when internal/apply
// itself is seen making no write (the finder would be blind).
func TestOnlyApplyWrites(t *testing.T) {
	pkgs := goList(t, "-export", "-deps", "./cmd/...", "./internal/...")
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	applyWrites := 0
	for _, p := range goList(t, "./cmd/...", "./internal/...") {
		for _, imp := range p.Imports {
			if p.ImportPath != writer && slices.ContainsFunc(writingImports, func(w string) bool { return imp == w || strings.HasPrefix(imp, w+"/") }) {
				t.Errorf("%s imports %s, a client that writes to a cluster: only %s writes", p.ImportPath, imp, writer)
			}
		}
		fset, files, imp := parsePackage(t, p, exports)
		calls, err := writeCalls(fset, p.ImportPath, files, imp)
		if err != nil {
			t.Fatalf("type-checking %s: %v", p.ImportPath, err)
		}
		if p.ImportPath == writer {
			applyWrites = len(calls)
			t.Logf("%s writes at: %s", writer, strings.Join(calls, "; "))
			continue
		}
		for _, c := range calls {
			t.Errorf("%s writes to a cluster (%s): only %s writes; read with a Get or a List, or move the write there", p.ImportPath, c, writer)
		}
	}
	if applyWrites == 0 {
		t.Errorf("%s makes no write the finder sees: the finder is broken", writer)
	}
}

// TestWriteCallsFinder proves the finder can fail: a dynamic client's Patch
// and Delete, a REST client's Post, are writes; a Get, a List, and a Patch
// method of the package's own are not.
func TestWriteCallsFinder(t *testing.T) {
	pkgs := goList(t, "-export", "-deps", "k8s.io/client-go/dynamic", "k8s.io/client-go/rest")
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	fset, files := parseSources(t, map[string]string{"p.go": `package p

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

type own struct{}

func (own) Patch() {}

func use(ctx context.Context, c dynamic.NamespaceableResourceInterface, r rest.Interface) {
	_, _ = c.Namespace("ns").Get(ctx, "n", metav1.GetOptions{})
	_, _ = c.List(ctx, metav1.ListOptions{})
	own{}.Patch()
	_, _ = c.Namespace("ns").Patch(ctx, "n", types.MergePatchType, nil, metav1.PatchOptions{})
	_ = c.Delete(ctx, "n", metav1.DeleteOptions{})
	_ = r.Post()
}
`})
	got, err := writeCalls(fset, "example.com/p", files, exportImporter(fset, exports))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p.go:20: k8s.io/client-go/dynamic.ResourceInterface.Patch",
		"p.go:21: k8s.io/client-go/dynamic.ResourceInterface.Delete",
		"p.go:22: k8s.io/client-go/rest.Interface.Post",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("write calls:\n got %q\nwant %q", got, want)
	}
}
