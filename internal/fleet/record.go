package fleet

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Helm release record as the Secret storage driver (Helm's default, and
// helm-controller's) keeps it: a Secret named sh.helm.release.v1.<release>.v<N>
// of type helm.sh/release.v1 in the release's storage namespace, labelled
// owner=helm, name, status and version, whose data.release is the release as
// gzipped JSON, base64-encoded once more inside the Secret's own data.
//
// Anyone who can create a Secret in a namespace can write one, with any body:
// a record is the release its labels name in its own namespace, and what its
// body costs to read is bounded before it is decoded.
const (
	recordType   = "helm.sh/release.v1"
	recordPrefix = "sh.helm.release.v1."
	// maxSecretData is what the API server lets a Secret hold.
	maxSecretData = 1 << 20
	// maxRecordUnzipped bounds what a record is read to once unzipped: a
	// pool's release (its chart without dependencies, its manifest, and
	// values of at most MaxValuesBytes) is under 1.2 MiB, and tens of KiB in
	// practice; a record of another chart is read no further than its
	// chart's name, which Helm writes near its start.
	maxRecordUnzipped = 2 << 20
)

// record is the part of a Helm release the fleet tools read.
type record struct {
	// Name and Namespace are what the body says; the release is the one the
	// Secret's labels and namespace name (consistent says whether they agree).
	Name, Namespace string
	Status          string
	// Chart is the chart's name, the only part of a record of another chart
	// that is read.
	Chart string
	// Config holds the values the release was installed with (helm install
	// -f, or what helm-controller computed): read only for the pool chart,
	// and then only within the values' bounds (configProblem says why not).
	Config        map[string]any
	configProblem string
	// secret is "<storage namespace>/<Secret name>".
	secret string
}

// recordKey says which release a record Secret belongs to, from its labels,
// so only the newest version of each release is decoded. A Secret of the
// record type whose name is not the one Helm gives the release and version
// its labels name is inconsistent: listed, never read.
func recordKey(s *unstructured.Unstructured) (key string, version int, ok bool, inconsistent string) {
	if t, _, _ := unstructured.NestedString(s.Object, "type"); t != recordType || !strings.HasPrefix(s.GetName(), recordPrefix) {
		return "", 0, false, ""
	}
	l := s.GetLabels()
	if l["owner"] != "helm" || l["name"] == "" {
		return "", 0, false, ""
	}
	v, err := strconv.Atoi(l["version"])
	if err != nil || v < 1 {
		return "", 0, false, fmt.Sprintf("its version label %q is not a release version", l["version"])
	}
	if want := fmt.Sprintf("%s%s.v%d", recordPrefix, l["name"], v); s.GetName() != want {
		return "", 0, false, fmt.Sprintf("its labels name release %q version %d, whose record Helm names %s", l["name"], v, want)
	}
	return s.GetNamespace() + "/" + l["name"], v, true, ""
}

// errUndecodable marks a record that cannot be read at all (not base64, not
// gzip, not JSON, past its bounds): listed and skipped, as helm list skips it.
var errUndecodable = errors.New("undecodable")

// decodeRecord reads the release a record Secret holds: its name, namespace,
// status and chart name, and, for poolChart only, its values. The body is
// streamed: a record of another chart is read no further than its chart's
// name, and nothing of it is kept.
func decodeRecord(s *unstructured.Unstructured, poolChart string) (*record, error) {
	where := s.GetNamespace() + "/" + s.GetName()
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: Helm release record %s: %s", errUndecodable, where, fmt.Sprintf(format, a...))
	}
	data, _ := s.Object["data"].(map[string]any)
	raw, ok := data["release"].(string)
	if !ok {
		return nil, bad("it has no data.release")
	}
	if len(raw) > base64.StdEncoding.EncodedLen(maxSecretData) {
		return nil, bad("data.release is larger than a Secret holds")
	}
	outer, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, bad("data.release is not base64")
	}
	inner, err := base64.StdEncoding.AppendDecode(nil, outer)
	if err != nil {
		return nil, bad("the release is not base64")
	}
	var body io.Reader = bytes.NewReader(inner)
	// Helm writes records gzipped; it reads unzipped ones too.
	if len(inner) > 3 && bytes.Equal(inner[:3], []byte{0x1f, 0x8b, 0x08}) {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, bad("the release is not gzip: %v", err)
		}
		body = zr
	}
	limited := &boundedReader{r: body, left: maxRecordUnzipped}
	r, err := readRelease(json.NewDecoder(limited), poolChart)
	switch {
	case limited.exceeded:
		return nil, bad("larger than %d MiB unzipped, more than a release of the pool chart holds", maxRecordUnzipped>>20)
	case err != nil:
		return nil, bad("the release is not JSON of a Helm release: %v", err)
	}
	r.secret = where
	return r, nil
}

// boundedReader reads at most left bytes, then fails, saying so.
type boundedReader struct {
	r        io.Reader
	left     int
	exceeded bool
}

var errTooLarge = errors.New("past its bound")

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.exceeded = true
		return 0, errTooLarge
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= n
	return n, err
}

// skipValue reads a JSON value without keeping it.
type skipValue struct{}

func (*skipValue) UnmarshalJSON([]byte) error { return nil }

// rawValue keeps a JSON value's text, for config read before its chart is known.
type rawValue struct{ text []byte }

func (v *rawValue) UnmarshalJSON(b []byte) error {
	v.text = append([]byte(nil), b...)
	return nil
}

// readRelease streams a release's top-level keys. Helm writes name, info,
// chart (metadata first), config, manifest, hooks, version and namespace, in
// that order; a body in another order costs no more: config read before the
// chart is kept as text (bounded) until the chart says whether it is needed.
func readRelease(dec *json.Decoder, poolChart string) (*record, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	r := &record{}
	chartRead := false
	var early *rawValue
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch key {
		case "name":
			err = dec.Decode(&r.Name)
		case "namespace":
			err = dec.Decode(&r.Namespace)
		case "info":
			var info struct {
				Status string `json:"status"`
			}
			err = dec.Decode(&info)
			r.Status = info.Status
		case "chart":
			if r.Chart, err = readChartName(dec); err != nil {
				return nil, err
			}
			chartRead = true
			if r.Chart != poolChart {
				// Another chart's record: nothing more of it is read.
				return r, nil
			}
			if err = skipRest(dec); err != nil {
				return nil, err
			}
			if early != nil {
				r.readConfig(early.text)
			}
		case "config":
			switch {
			case !chartRead:
				early = &rawValue{}
				err = dec.Decode(early)
			default:
				var v rawValue
				if err = dec.Decode(&v); err == nil {
					r.readConfig(v.text)
				}
			}
		default:
			err = dec.Decode(&skipValue{})
		}
		if err != nil {
			return nil, err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	return r, nil
}

// readChartName reads a release's chart value only as far as its
// metadata.name (Helm writes the metadata first), leaving the decoder inside
// the chart: skipRest then skips what is left of it, unread.
func readChartName(dec *json.Decoder) (string, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return "", err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", err
		}
		if key != "metadata" {
			if err := dec.Decode(&skipValue{}); err != nil {
				return "", err
			}
			continue
		}
		var meta struct {
			Name string `json:"name"`
		}
		err = dec.Decode(&meta)
		return meta.Name, err
	}
	return "", nil
}

// skipRest skips the rest of an object the decoder is inside, and its end.
func skipRest(dec *json.Decoder) error {
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return err
		}
		if err := dec.Decode(&skipValue{}); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

// readConfig decodes a pool record's values within the values' bounds.
func (r *record) readConfig(text []byte) {
	r.Config, r.configProblem = nil, ""
	if err := checkJSONValues(text); err != nil {
		r.configProblem = err.Error()
		return
	}
	var config any
	if err := json.Unmarshal(text, &config); err != nil {
		r.configProblem = "its values are not JSON: " + err.Error()
		return
	}
	switch c := config.(type) {
	case nil:
		r.Config = map[string]any{}
	case map[string]any:
		r.Config = c
	default:
		r.configProblem = fmt.Sprintf("its values (config) are a %T, not a map", config)
	}
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("found %v where %q was expected", tok, string(want))
	}
	return nil
}

// EncodeRecord writes a release the way Helm's Secret driver does; tests and
// fixtures use it to build records.
func EncodeRecord(name, namespace, chartName string, version int, status string, config map[string]any) (map[string]any, error) {
	rel := map[string]any{
		"name": name, "namespace": namespace, "version": version,
		"info":   map[string]any{"status": status},
		"chart":  map[string]any{"metadata": map[string]any{"name": chartName}},
		"config": config,
	}
	b, err := json.Marshal(rel)
	if err != nil {
		return nil, err
	}
	return EncodeRecordBody(name, namespace, version, status, b)
}

// EncodeRecordBody writes body, gzipped, as the release of a record Secret
// of release name in namespace, with the type, name and labels Helm gives
// one: what a tenant who forges a record writes, any body at all.
func EncodeRecordBody(name, namespace string, version int, status string, body []byte) (map[string]any, error) {
	var zipped bytes.Buffer
	zw, err := gzip.NewWriterLevel(&zipped, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	inner := base64.StdEncoding.EncodeToString(zipped.Bytes())
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       recordType,
		"metadata": map[string]any{
			"name":      fmt.Sprintf("%s%s.v%d", recordPrefix, name, version),
			"namespace": namespace,
			"labels": map[string]any{
				"owner": "helm", "name": name, "status": status, "version": strconv.Itoa(version),
			},
		},
		"data": map[string]any{"release": base64.StdEncoding.EncodeToString([]byte(inner))},
	}, nil
}

// ReleaseValues are the values the newest record of a Helm release holds, as
// `helm get values` prints them, when that record is of chart: nil, without
// error, when the release has no such record or it cannot be read. secret
// names the record read.
func ReleaseValues(ctx context.Context, p engine.ClientProvider, namespace, release, chart string) (values map[string]any, secret string, err error) {
	c, _, err := p.GetClientFor("v1", "Secret")
	if err != nil {
		return nil, "", fmt.Errorf("reading the Helm release records of %s/%s: %w", namespace, release, err)
	}
	l, err := c.Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=" + release})
	if err != nil {
		return nil, "", fmt.Errorf("reading the Helm release records of %s/%s: %w", namespace, release, err)
	}
	var newest *unstructured.Unstructured
	best := 0
	for i := range l.Items {
		key, v, ok, _ := recordKey(&l.Items[i])
		if ok && key == namespace+"/"+release && v > best {
			newest, best = &l.Items[i], v
		}
	}
	if newest == nil {
		return nil, "", nil
	}
	rec, err := decodeRecord(newest, chart)
	if err != nil || rec.Chart != chart || rec.configProblem != "" || rec.Status == "uninstalled" || rec.Status == "uninstalling" {
		return nil, "", nil
	}
	if rec.Config == nil {
		rec.Config = map[string]any{}
	}
	return rec.Config, rec.secret, nil
}
