package schema

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The pool chart's schema states every static rule its templates check and a
// JSON schema can state (cozystack-api validates nothing; the dashboard's form
// validates against the schema), so the form refuses them before a HelmRelease
// exists: cluster required and a DNS label, the image fields by the library's
// patterns and lengths (or "", the fallback), osImage with at most one of
// builtin and factory, and the Kubernetes minors the chart ships with their
// releases. Each refusal beside its valid neighbour.
func TestPoolSchemaStatesTheTemplatesStaticRules(t *testing.T) {
	s := compile(t, poolChart)
	id64, url := strings.Repeat("a", 64), "https://f.internal/"
	url2048 := url + strings.Repeat("a", 2048-len(url))
	checkCases(t, s, []string{
		"{cluster: acme}",
		"{cluster: a}",
		"{cluster: acme, talos: {version: v1.13.6, schematicID: " + id64 + ", imageFactoryURL: '" + url2048 + "'}}",
		"{cluster: acme, talos: {version: '', schematicID: '', imageFactoryURL: ''}}",
		"{cluster: acme, talos: {version: v1.14.0-beta.1}}",
		"{cluster: acme, osImage: {builtin: {schematicID: " + id64 + ", version: v1.13.6}}}",
		"{cluster: acme, osImage: {factory: {schematicID: '', version: '', imageFactoryURL: 'http://10.0.0.5:8080/talos/'}}}",
		"{cluster: acme, osImage: {factory: {}}}",
		"{cluster: acme, version: v1.31}",
		"{cluster: acme, version: v1.36}",
		"{cluster: acme, version: v1.35.0}",
		"{cluster: acme, version: v1.35.6}",
		"{cluster: acme, version: v1.36.0}",
	}, []string{
		"{}",
		"{storageClass: fast}",
		"{cluster: ''}",
		"{cluster: acme-}",
		"{cluster: acme, talos: {version: v1.13}}",
		"{cluster: acme, talos: {version: 1.13.6}}",
		"{cluster: acme, talos: {version: v1.14.0-RC1}}",
		"{cluster: acme, talos: {version: v1.13.6-" + strings.Repeat("a", 57) + "}}",
		"{cluster: acme, talos: {schematicID: ABC}}",
		"{cluster: acme, talos: {schematicID: " + id64 + "a}}",
		"{cluster: acme, talos: {imageFactoryURL: factory.talos.dev}}",
		"{cluster: acme, talos: {imageFactoryURL: 'https://f.internal:99999'}}",
		"{cluster: acme, talos: {imageFactoryURL: '" + url2048 + "a'}}",
		"{cluster: acme, osImage: {builtin: {schematicID: 'abc '}}}",
		"{cluster: acme, osImage: {builtin: {version: v1.13}}}",
		"{cluster: acme, osImage: {factory: {imageFactoryURL: 'ftp://f.internal'}}}",
		"{cluster: acme, osImage: {factory: {schematicID: " + id64 + "a}}}",
		"{cluster: acme, osImage: {builtin: {}, factory: {}}}",
		"{cluster: acme, osImage: null}",
		"{cluster: acme, osImage: builtin}",
		"{cluster: acme, osImage: {builtin: false}}",
		"{cluster: acme, osImage: {factory: 0}}",
		"{cluster: acme, version: v1.30}",
		"{cluster: acme, version: v1.37}",
		"{cluster: acme, version: v1.35.7}",
		"{cluster: acme, version: v1.36.1}",
		"{cluster: acme, version: v1.35.01}",
		"{cluster: acme, version: v1.35.}",
	})
}

// libraryMaxLength is the library's longest for an image field.
func libraryMaxLength(t *testing.T, field string) float64 {
	t.Helper()
	n, err := strconv.Atoi(definedPatterns(t, "packages/library/worker-image-lib/templates/_patterns.tpl", "worker-image-lib.maxLengths")[field])
	require.NoError(t, err, field)
	return float64(n)
}

// The pool schema's rules are the templates' own, read from them: the image
// fields refer to definitions holding the library's pattern (with "" for the
// fallback) and length; cluster's pattern is the one kubernetes-nodes.pool
// checks; version's enum is every minor of kubernetes-nodes.kubernetesReleases
// and every release of it up to the chart's patch, newest first.
func TestPoolSchemaRulesAreTheTemplates(t *testing.T) {
	lib := libraryPatterns(t)
	schema := document(t, chartFile(t, poolChart+"/values.schema.json"))
	for def, field := range map[string]string{"schematicID": "schematicID", "talosVersion": "version", "imageFactoryURL": "imageFactoryURL"} {
		require.Equal(t, "^$|"+lib[field], jsonAt(t, schema, "definitions", def, "pattern"), def)
		require.Equal(t, libraryMaxLength(t, field), jsonAt(t, schema, "definitions", def, "maxLength"), def)
	}
	for path, def := range map[string]string{
		"talos/version": "talosVersion", "talos/schematicID": "schematicID", "talos/imageFactoryURL": "imageFactoryURL",
		"osImage/builtin/schematicID": "schematicID", "osImage/builtin/version": "talosVersion",
		"osImage/factory/schematicID": "schematicID", "osImage/factory/version": "talosVersion", "osImage/factory/imageFactoryURL": "imageFactoryURL",
	} {
		at := []string{"properties"}
		for i, p := range strings.Split(path, "/") {
			if i > 0 {
				at = append(at, "properties")
			}
			at = append(at, p)
		}
		require.Equal(t, "#/definitions/"+def, jsonAt(t, schema, append(at, "$ref")...), path)
	}
	require.Equal(t, float64(1), jsonAt(t, schema, "properties", "osImage", "maxProperties"))
	require.Equal(t, []interface{}{"cluster"}, jsonAt(t, schema, "required"))

	helpers := chartFile(t, "packages/library/kubernetes-nodes-lib/templates/_helpers.tpl")
	checked := regexp.MustCompile(`regexMatch "([^"]+)" \$cluster`).FindStringSubmatch(helpers)
	require.NotNil(t, checked, "kubernetes-nodes.pool checks cluster with a pattern")
	require.Equal(t, strings.ReplaceAll(checked[1], `\\`, `\`), jsonAt(t, schema, "properties", "cluster", "pattern"))

	releases := definedPatterns(t, "packages/library/kubernetes-nodes-lib/templates/_versions.tpl", "kubernetes-nodes.kubernetesReleases")
	require.NotEmpty(t, releases)
	minor := func(m string) int { n, _ := strconv.Atoi(strings.TrimPrefix(m, "v1.")); return n }
	var minors []string
	for m := range releases {
		minors = append(minors, m)
	}
	sort.Slice(minors, func(i, j int) bool { return minor(minors[i]) > minor(minors[j]) })
	want := []interface{}{}
	for _, m := range minors {
		want = append(want, m)
	}
	for _, m := range minors {
		patch, err := strconv.Atoi(strings.TrimPrefix(releases[m], m+"."))
		require.NoError(t, err, releases[m])
		for p := patch; p >= 0; p-- {
			want = append(want, fmt.Sprintf("%s.%d", m, p))
		}
	}
	require.Equal(t, want, jsonAt(t, schema, "properties", "version", "enum"), "regenerate the enum from kubernetes-nodes.kubernetesReleases")
}
