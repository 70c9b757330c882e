package fleet

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Helm release record as the Secret storage driver (Helm's default, and
// helm-controller's) keeps it: a Secret named sh.helm.release.v1.<release>.v<N>
// of type helm.sh/release.v1 in the release's storage namespace, labelled
// owner=helm, name, status and version, whose data.release is the release as
// gzipped JSON, base64-encoded once more inside the Secret's own data.
const (
	recordType   = "helm.sh/release.v1"
	recordPrefix = "sh.helm.release.v1."
	// maxRecord bounds a record once unzipped: a Secret holds at most 1 MiB,
	// and a pool's release is a few tens of KiB.
	maxRecord = 32 << 20
)

// record is the part of a Helm release the fleet tools read.
type record struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Version   int    `json:"version"`
	Info      struct {
		Status string `json:"status"`
	} `json:"info"`
	Chart struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	} `json:"chart"`
	// Config holds the values the release was installed with (helm install
	// -f, or what helm-controller computed).
	Config map[string]interface{} `json:"config"`
	// secret is "<storage namespace>/<Secret name>".
	secret string
}

// recordKey says which release a record Secret belongs to, from its labels,
// so only the newest version of each release is decoded.
func recordKey(s *unstructured.Unstructured) (key string, version int, ok bool) {
	if t, _, _ := unstructured.NestedString(s.Object, "type"); t != recordType || !strings.HasPrefix(s.GetName(), recordPrefix) {
		return "", 0, false
	}
	l := s.GetLabels()
	if l["owner"] != "helm" || l["name"] == "" {
		return "", 0, false
	}
	v, err := strconv.Atoi(l["version"])
	if err != nil {
		return "", 0, false
	}
	return s.GetNamespace() + "/" + l["name"], v, true
}

// decodeRecord reads the release a record Secret holds.
func decodeRecord(s *unstructured.Unstructured) (*record, error) {
	where := s.GetNamespace() + "/" + s.GetName()
	raw, _, _ := unstructured.NestedString(s.Object, "data", "release")
	outer, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fmt.Errorf("Helm release record %s: data.release is not base64: %w", where, err)
	}
	inner, err := base64.StdEncoding.DecodeString(string(outer))
	if err != nil {
		return nil, fmt.Errorf("Helm release record %s: the release is not base64: %w", where, err)
	}
	body := inner
	// Helm writes records gzipped; it reads unzipped ones too.
	if len(inner) > 3 && bytes.Equal(inner[:3], []byte{0x1f, 0x8b, 0x08}) {
		zr, err := gzip.NewReader(bytes.NewReader(inner))
		if err != nil {
			return nil, fmt.Errorf("Helm release record %s: %w", where, err)
		}
		body, err = io.ReadAll(io.LimitReader(zr, maxRecord+1))
		if err != nil {
			return nil, fmt.Errorf("Helm release record %s: %w", where, err)
		}
		if len(body) > maxRecord {
			return nil, fmt.Errorf("Helm release record %s: larger than %d MiB unzipped", where, maxRecord>>20)
		}
	}
	var r record
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("Helm release record %s: %w", where, err)
	}
	r.secret = where
	return &r, nil
}

// EncodeRecord writes a release the way Helm's Secret driver does; tests and
// fixtures use it to build records.
func EncodeRecord(name, namespace, chartName string, version int, status string, config map[string]interface{}) (map[string]interface{}, error) {
	rel := map[string]interface{}{
		"name": name, "namespace": namespace, "version": version,
		"info":   map[string]interface{}{"status": status},
		"chart":  map[string]interface{}{"metadata": map[string]interface{}{"name": chartName}},
		"config": config,
	}
	b, err := json.Marshal(rel)
	if err != nil {
		return nil, err
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	inner := base64.StdEncoding.EncodeToString(zipped.Bytes())
	return map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       recordType,
		"metadata": map[string]interface{}{
			"name":      fmt.Sprintf("%s%s.v%d", recordPrefix, name, version),
			"namespace": namespace,
			"labels": map[string]interface{}{
				"owner": "helm", "name": name, "status": status, "version": strconv.Itoa(version),
			},
		},
		"data": map[string]interface{}{"release": base64.StdEncoding.EncodeToString([]byte(inner))},
	}, nil
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
