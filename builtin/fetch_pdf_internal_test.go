package builtin

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var updatePDF = flag.Bool("update", false, "rewrite testdata/fetch/kerned.pdf from its generator")

// pdfWithoutWidths writes a PDF whose font, Helvetica, has no /Widths (the
// standard fonts may omit them): the first line's words are set apart only
// by TJ adjustments, the second's by moves of their own (Td), and the third
// is placed glyph by glyph, a wider move between its words.
func pdfWithoutWidths() []byte {
	content := "BT /F1 12 Tf 72 720 Td [(Kerned) -250 (words) -250 (here) -20 (!)] TJ ET\n" +
		"BT /F1 12 Tf 72 700 Td (Placed) Tj 60 0 Td (word) Tj 40 0 Td (by) Tj 20 0 Td (word) Tj ET\n" +
		"BT /F1 12 Tf 72 680 Td (G) Tj 7 0 Td (l) Tj 7 0 Td (y) Tj 7 0 Td (p) Tj 7 0 Td (h) Tj 11 0 Td (s) Tj 7 0 Td (e) Tj 7 0 Td (t) Tj ET\n"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// TestPDFWithoutWidths: the words of a PDF whose font has no /Widths keep
// their spaces, whether the writer kerned them apart, moved to each, or
// placed every glyph; a kerning adjustment inside a word adds none.
func TestPDFWithoutWidths(t *testing.T) {
	path := filepath.Join("testdata", "fetch", "kerned.pdf")
	data := pdfWithoutWidths()
	if *updatePDF {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept, data) {
		t.Fatalf("%s differs from its generator: run go test -run TestPDFWithoutWidths -update", path)
	}
	if bytes.Contains(kept, []byte("/Widths")) {
		t.Fatal("the fixture has /Widths")
	}
	got, err := pdfText(kept)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Kerned words here!\nPlaced word by word\nGlyph set"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}
