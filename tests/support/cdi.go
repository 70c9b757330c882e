package support

import "fmt"

// The cluster objects CDI's clone planner reads (DESIGN.md "Every
// host-assisted fallback that can be known at render time is refused"), as
// YAML documents to add to a fixture cluster: the render tests and the CLI's
// build the same states from them.

// CDIResource is the CDI resource, with spec.cloneStrategyOverride when override is set.
func CDIResource(name, override string) string {
	spec := "{}"
	if override != "" {
		spec = "{cloneStrategyOverride: " + override + "}"
	}
	return fmt.Sprintf("---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: CDI\nmetadata: {name: %s}\nspec: %s\n", name, spec)
}

// StorageProfile is a class's StorageProfile; "" leaves a status field out.
func StorageProfile(class, strategy, volumeMode string) string {
	status := ""
	if strategy != "" {
		status += "\n  cloneStrategy: " + strategy
	}
	if volumeMode != "" {
		status += "\n  claimPropertySets: [{accessModes: [ReadWriteMany], volumeMode: " + volumeMode + "}]"
	}
	if status == "" {
		status = " {}"
	}
	return fmt.Sprintf("---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: StorageProfile\nmetadata: {name: %s}\nspec: {}\nstatus:%s\n", class, status)
}

// SnapshotClass is a VolumeSnapshotClass for a CSI driver.
func SnapshotClass(name, driver string) string {
	return fmt.Sprintf("---\napiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata: {name: %s}\ndriver: %s\ndeletionPolicy: Delete\n", name, driver)
}
