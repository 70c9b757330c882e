// Bounds on a chart the operator names (rollcheck's head and base, --chart),
// checked before Helm's loader reads it: the loader reads every entry of an
// archive or folder into memory first, so one of a million empty files takes
// seconds and gigabytes before any check of ours could run.

package report

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

const (
	// maxChartEntries bounds the files and folders of a chart, its
	// dependencies included: the pool chart has 36 files.
	maxChartEntries = 1000
	// maxChartFileBytes bounds one file of a chart, as Helm's own loader
	// bounds it (5 MiB).
	maxChartFileBytes = 5 << 20
	// maxChartUnpackedBytes bounds a chart's files together.
	maxChartUnpackedBytes = 64 << 20
)

// chartBudget counts a chart's entries and bytes as they are met.
type chartBudget struct {
	entries int
	bytes   int64
}

// add counts one entry of size bytes (a folder: 0); name says which.
func (b *chartBudget) add(name string, size int64) error {
	b.entries++
	b.bytes += size
	switch {
	case b.entries > maxChartEntries:
		return fmt.Errorf("holds more than %d files and folders, where a pool chart holds tens: not read further", maxChartEntries)
	case size > maxChartFileBytes:
		return fmt.Errorf("its file %s is %d bytes, over the %d one file of a chart may have (as Helm's loader allows)", name, size, maxChartFileBytes)
	case b.bytes > maxChartUnpackedBytes:
		return fmt.Errorf("its files come to more than %d bytes unpacked, where a pool chart is hundreds of kilobytes: not read further", maxChartUnpackedBytes)
	}
	return nil
}

// checkArchiveFile bounds a chart archive on disk before Helm loads it.
func checkArchiveFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return checkArchive(f)
}

// checkArchive reads a chart archive's entry headers (what unpacking them
// costs is bounded by the sizes they declare, checked first): too many
// entries, a file too large, or too many bytes in all is refused. An
// archive that is not gzip or tar is left to Helm's loader, which says so.
func checkArchive(r io.Reader) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	var b chartBudget
	for {
		h, err := tr.Next()
		if err != nil {
			// io.EOF: all counted; anything else, the loader's to report.
			return nil
		}
		if err := b.add(h.Name, h.Size); err != nil {
			return err
		}
	}
}
