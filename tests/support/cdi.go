package support

import (
	"fmt"
	"strings"
)

// The cluster objects CDI's DataVolume controller and clone planner read
// (docs/design.md "Every host-assisted fallback that can be known at render time is
// refused" and "What CDI itself does"), as YAML documents to add to a fixture
// cluster, shaped as CDI's controllers write them: the render tests, the CLI's
// and the tier build the same states from them.

// CDIResource is the CDI resource, with spec.cloneStrategyOverride when override is set.
func CDIResource(name, override string) string {
	return CDIResourceIn(name, override, "")
}

// CDIResourceIn is the CDI resource in status.phase phase ("" leaves status out).
func CDIResourceIn(name, override, phase string) string {
	spec := "{}"
	if override != "" {
		spec = "{cloneStrategyOverride: " + override + "}"
	}
	status := ""
	if phase != "" {
		status = "status: {phase: " + phase + "}\n"
	}
	return fmt.Sprintf("---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: CDI\nmetadata: {name: %s}\nspec: %s\n%s", name, spec, status)
}

// CDIConfig is CDI's "config" CDIConfig with status.filesystemOverhead: the
// global overhead, and per class as "class=overhead" pairs. CDI's controller
// writes global "0.06" unless the spec sets another.
func CDIConfig(global string, perClass ...string) string {
	classes := ""
	if len(perClass) > 0 {
		var pairs []string
		for _, p := range perClass {
			class, overhead, _ := strings.Cut(p, "=")
			pairs = append(pairs, fmt.Sprintf("%s: %q", class, overhead))
		}
		classes = ", storageClass: {" + strings.Join(pairs, ", ") + "}"
	}
	return fmt.Sprintf("---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: CDIConfig\nmetadata: {name: config}\nspec: {}\nstatus: {filesystemOverhead: {global: %q%s}}\n", global, classes)
}

// Profile is a class's StorageProfile as CDI's controller fills its status:
// claimPropertySets for a provisioner CDI knows (one set of ReadWriteMany and
// VolumeMode; "" states none, as for a provisioner CDI does not know;
// "unset" a set with no volumeMode), the clone strategy, the VolumeSnapshotClass
// it found, and the minimumSupportedPvcSize annotation CDI adds for some
// provisioners. Empty fields are left out.
type Profile struct {
	Class, CloneStrategy, VolumeMode, SnapshotClass, MinimumSize string
}

// YAML is the StorageProfile document.
func (p Profile) YAML() string {
	meta := "{name: " + p.Class + "}"
	if p.MinimumSize != "" {
		meta = fmt.Sprintf("{name: %s, annotations: {cdi.kubevirt.io/minimumSupportedPvcSize: %q}}", p.Class, p.MinimumSize)
	}
	var status []string
	if p.CloneStrategy != "" {
		status = append(status, "cloneStrategy: "+p.CloneStrategy)
	}
	switch p.VolumeMode {
	case "":
	case "unset":
		status = append(status, "claimPropertySets: [{accessModes: [ReadWriteMany]}]")
	default:
		status = append(status, "claimPropertySets: [{accessModes: [ReadWriteMany], volumeMode: "+p.VolumeMode+"}]")
	}
	if p.SnapshotClass != "" {
		status = append(status, "snapshotClass: "+p.SnapshotClass)
	}
	return fmt.Sprintf("---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: StorageProfile\nmetadata: %s\nspec: {}\nstatus: {%s}\n", meta, strings.Join(status, ", "))
}

// StorageProfile is a class's StorageProfile; "" leaves a status field out.
func StorageProfile(class, strategy, volumeMode string) string {
	return Profile{Class: class, CloneStrategy: strategy, VolumeMode: volumeMode}.YAML()
}

// SnapshotClass is a VolumeSnapshotClass for a CSI driver.
func SnapshotClass(name, driver string) string {
	return fmt.Sprintf("---\napiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata: {name: %s}\ndriver: %s\ndeletionPolicy: Delete\n", name, driver)
}

// CSIDriver is the CSIDriver object a CSI driver installs.
func CSIDriver(name string) string {
	return fmt.Sprintf("---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: %s}\nspec: {attachRequired: true}\n", name)
}
