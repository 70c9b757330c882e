// Package golden names a golden DataVolume as the catalog chart does
// (worker-image-lib.goldenName and perClassGoldenName) and reads a name back
// into its flavor. It is the one Go copy of that rule: the CLI's reports and
// the tests' support code use it, and its test renders the chart's own
// templates to prove the two agree.
package golden

import "strings"

const (
	// Namespace holds every golden.
	Namespace = "cozy-public"
	// Prefix starts every golden's name; other DataVolumes in Namespace (VM
	// images) are not goldens.
	Prefix = "talos-worker-"
)

// Name is a flavor's plain golden: talos-worker-<schematicID>-<version>.
func Name(schematicID, version string) string {
	return Prefix + schematicID + "-" + version
}

// PerClassName is a flavor's golden on an additional class:
// <Name>--<class>. "--" is in no version, so it never names another
// flavor's golden.
func PerClassName(schematicID, version, class string) string {
	return Name(schematicID, version) + "--" + class
}

// Flavor is a golden's name read back.
type Flavor struct {
	// Plain is the flavor's plain golden name (Name(SchematicID, Version)).
	Plain                string
	SchematicID, Version string
	// Class is a per-class golden's class; "" for the plain golden.
	Class string
}

// Parse reads a name built by Name or PerClassName. A schematicID holds no
// "." and every version does, between digits, and no version holds "--":
// so the version starts at the last "-v" before the first ".", and the
// class after the first "--" past it. ok is false for a name not built that
// way; Plain is then the name itself.
func Parse(name string) (f Flavor, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	dot := strings.Index(rest, ".")
	if !found || dot < 0 {
		return Flavor{Plain: name}, false
	}
	v := strings.LastIndex(rest[:dot], "-v")
	if v <= 0 {
		return Flavor{Plain: name}, false
	}
	f.SchematicID, f.Version = rest[:v], rest[v+1:]
	if i := strings.Index(rest[dot:], "--"); i >= 0 {
		f.Version, f.Class = rest[v+1:dot+i], rest[dot+i+2:]
	}
	f.Plain = Name(f.SchematicID, f.Version)
	return f, true
}

// ImagePath is what the catalog appends to its factory URL to import a
// flavor (worker-image-lib.imageURL), so a golden's source URL less it is
// the factory URL it was imported from.
func ImagePath(schematicID, version string) string {
	return "/image/" + schematicID + "/" + version + "/openstack-amd64.raw.xz"
}
