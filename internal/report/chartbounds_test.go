package report

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chartutil"
)

// tgz writes a gzipped tar of files (name -> size of zero bytes) to a file of
// the test's own.
func tgz(t *testing.T, files func(add func(name string, size int))) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	files(func(name string, size int) {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(size), Typeflag: tar.TypeReg}))
		_, err := tw.Write(make([]byte, size))
		require.NoError(t, err)
	})
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	p := filepath.Join(t.TempDir(), "chart.tgz")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
	return p
}

// A chart archive's entries are counted and sized before Helm's loader
// reads it: 200,000 empty files (Helm's loader takes seconds and gigabytes
// over a million) and one file over 5 MiB are refused at once; the pool
// chart packaged as helm package packs it loads.
func TestChartArchiveBoundedBeforeLoading(t *testing.T) {
	many := tgz(t, func(add func(string, int)) {
		add("x/Chart.yaml", 0)
		for i := 0; i < 200000; i++ {
			add(fmt.Sprintf("x/templates/f%d.yaml", i), 0)
		}
	})
	start := time.Now()
	_, _, err := ChartAt(many, RegistryOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chart "+many+": holds more than 1000 files and folders")
	assert.Less(t, time.Since(start), 2*time.Second, "refused from the first entries, not after loading all")

	big := tgz(t, func(add func(string, int)) { add("x/Chart.yaml", 0); add("x/templates/big.yaml", 6<<20) })
	_, _, err = ChartAt(big, RegistryOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its file x/templates/big.yaml is 6291456 bytes, over the 5242880 one file of a chart may have")

	// The neighbour: the pool chart, packaged.
	pool, err := LoadPoolChart("")
	require.NoError(t, err)
	packaged, err := chartutil.Save(pool, t.TempDir())
	require.NoError(t, err)
	c, _, err := ChartAt(packaged, RegistryOptions{})
	require.NoError(t, err)
	assert.Equal(t, pool.Metadata.Name, c.Metadata.Name)
}

// A chart folder is counted as it is walked, before Helm's loader reads it.
func TestChartFolderBoundedBeforeLoading(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: x\nversion: 0.1.0\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "templates"), 0o700))
	_, _, err := ChartAt(dir, RegistryOptions{})
	require.NoError(t, err, "the neighbour: a small folder loads")
	for i := 0; i < 1000; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "templates", fmt.Sprintf("f%d.yaml", i)), nil, 0o600))
	}
	_, _, err = ChartAt(dir, RegistryOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "holds more than 1000 files and folders")
}
