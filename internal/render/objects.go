package render

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// LoadObjects reads multi-document YAML files of Kubernetes objects.
func LoadObjects(paths ...string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		more, err := ParseObjects(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objs = append(objs, more...)
	}
	return objs, nil
}

// ParseObjects parses a multi-document YAML stream; a `kind: List` is flattened.
func ParseObjects(raw []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		obj := map[string]interface{}{}
		if err := dec.Decode(&obj); err != nil {
			if err == io.EOF {
				return objs, nil
			}
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, err
			}
			for i := range list.Items {
				objs = append(objs, &list.Items[i])
			}
			continue
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("object without apiVersion, kind or metadata.name: %v", obj)
		}
		objs = append(objs, u)
	}
}

// clusterScopedKinds lists the kinds the charts look up that have no namespace;
// every other kind is namespaced.
var clusterScopedKinds = map[string]bool{
	"Namespace":                         true,
	"StorageClass":                      true,
	"VirtualMachineClusterInstancetype": true,
	"ClusterRole":                       true,
	"ClusterRoleBinding":                true,
	"CustomResourceDefinition":          true,
	"CDI":                               true,
	"StorageProfile":                    true,
	"VolumeSnapshotClass":               true,
	"CDIConfig":                         true,
	"CSIDriver":                         true,
	"PersistentVolume":                  true,
	"Package":                           true, // cozystack.io: the platform's packages, read by workerimage adopt
}

// ResourceFor names a kind's resource and says whether it is namespaced, for a
// cluster with no discovery to ask (a state file, a fake): the plural is
// guessed as the API machinery does, the scope comes from a fixed list.
func ResourceFor(apiVersion, kind string) (schema.GroupVersionResource, bool) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural, !clusterScopedKinds[kind]
}
