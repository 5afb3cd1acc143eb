package builtin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/ledongthuc/pdf"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/redact"
	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// WebFetchInput is the input of web_fetch.
type WebFetchInput struct {
	URL    string `json:"url" description:"Absolute http or https URL of a web page, PDF or text document" pattern:"^https?://" minLength:"8"`
	Format string `json:"format,omitempty" description:"How to return an HTML page: markdown (readable main content), text (plain text of the main content) or html (the main content's HTML)" enum:"markdown,text,html" default:"markdown"`
}

// WebFetchOutput is what web_fetch returns.
type WebFetchOutput struct {
	URL         string `json:"url" description:"The final URL, after redirects"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Title       string `json:"title,omitempty"`
	// Format says what Content holds: markdown, text or html for a web
	// page, text for a PDF, raw for text and JSON documents.
	Format    string `json:"format"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated,omitempty" description:"The document was cut at the size limit; the content covers its start"`
}

// WebFetch returns the web_fetch tool (seed 000's WebFetchTool): it reads a
// web page as Markdown of its main content (navigation, headers, footers,
// side bars, scripts and forms left out), a PDF as text, and text or JSON
// as it is. Other content types (images, archives) are refused with an
// execution_error naming the type. Requests go through opts.Guard
// (permission_denied for internal addresses) under opts.Timeout (timeout)
// and opts.MaxResponseBytes; a page over the limit is converted in part and
// marked truncated, a PDF over it is refused, since a cut PDF cannot be
// read.
func WebFetch(opts NetOptions) *wield.Tool {
	f := newFetcher(opts.Guard, opts.timeout(), opts.max())
	f.names = redact.New(redact.DefaultNames, opts.SecretNames)
	t := wield.Func("web_fetch",
		"Fetch a web page or PDF and return its main content as Markdown (or text or HTML). Internal addresses are refused.",
		func(ctx context.Context, in WebFetchInput) (WebFetchOutput, error) {
			return f.fetchDocument(ctx, in)
		})
	t.Category = wield.CategoryNetwork
	t.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}
	t.Tags = []string{"network", "web", "builtin"}
	t.Timeout = f.timeout + 5*time.Second
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}

func (f *fetcher) fetchDocument(ctx context.Context, in WebFetchInput) (WebFetchOutput, error) {
	format := in.Format
	if format == "" {
		format = "markdown"
	}
	if format != "markdown" && format != "text" && format != "html" {
		return WebFetchOutput{}, wield.Errorf(wield.ErrValidation, "format %q is not markdown, text or html", in.Format)
	}
	u, err := parseTarget(in.URL)
	if err != nil {
		return WebFetchOutput{}, err
	}
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return WebFetchOutput{}, wield.Errorf(wield.ErrValidation, "url %q: %v", in.URL, err)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; wield/1.0; +https://github.com/wieldhq/wield)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5")
	resp, err := f.do(ctx, req, 0)
	if err != nil {
		return WebFetchOutput{}, err
	}
	if resp.status < 200 || resp.status > 299 {
		err := wield.Errorf(wield.ErrExecution, "GET %s: HTTP %d %s", resp.url, resp.status, http.StatusText(resp.status))
		if resp.status == http.StatusTooManyRequests || resp.status >= 500 {
			return WebFetchOutput{}, wield.Transient(err)
		}
		return WebFetchOutput{}, err
	}
	contentType := resp.header.Get("Content-Type")
	mt := netMediaType(contentType)
	if mt == "" || mt == "application/octet-stream" || mt == "binary/octet-stream" {
		// Unlabelled: believe the bytes.
		contentType = http.DetectContentType(resp.body)
		mt = netMediaType(contentType)
	}
	out := WebFetchOutput{URL: resp.url, Status: resp.status, ContentType: mt, Truncated: resp.truncated}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		text, err := decodeText(resp.body, contentType, resp.truncated)
		if err != nil {
			return WebFetchOutput{}, err
		}
		out.Title, out.Content, err = readablePage(text, format, resp.url)
		if err != nil {
			return WebFetchOutput{}, err
		}
		out.Format = format
	case mt == "application/pdf":
		if resp.truncated {
			return WebFetchOutput{}, wield.Errorf(wield.ErrExecution,
				"GET %s: the PDF is larger than the %d-byte limit, and a cut PDF cannot be read", resp.url, f.max)
		}
		text, err := pdfText(resp.body)
		if err != nil {
			return WebFetchOutput{}, wield.Errorf(wield.ErrExecution, "GET %s: cannot read the PDF: %v", resp.url, err)
		}
		out.Content, out.Format = text, "text"
	case isReadableType(mt):
		text, err := decodeText(resp.body, contentType, resp.truncated)
		if err != nil {
			return WebFetchOutput{}, err
		}
		out.Content, out.Format = text, "raw"
	default:
		return WebFetchOutput{}, wield.Errorf(wield.ErrExecution,
			"GET %s: the content type is %s, which web_fetch does not read (it reads HTML, PDF, text and JSON; http_get returns other types as base64)", resp.url, mt)
	}
	return out, nil
}

// decodeText converts a document to UTF-8 from the charset its header or
// its own <meta> declares (GBK, Shift_JIS, Latin-1 ...).
func decodeText(body []byte, contentType string, truncated bool) (string, error) {
	if truncated {
		body = trimPartialRune(body)
	}
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", wield.Errorf(wield.ErrExecution, "decode the document's text: %v", err)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// markdownConverter is shared: a Converter is safe for concurrent use.
var markdownConverter = converter.NewConverter(converter.WithPlugins(
	base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin(),
))

// readablePage returns the page's title and its main content in format.
func readablePage(page, format, pageURL string) (title, content string, err error) {
	doc, err := nethtml.Parse(strings.NewReader(strings.ToValidUTF8(page, "\uFFFD")))
	if err != nil {
		return "", "", wield.Errorf(wield.ErrExecution, "parse HTML: %v", err)
	}
	if t := findNode(doc, func(n *nethtml.Node) bool { return n.DataAtom == atom.Title }); t != nil {
		title = collapseSpace(nodeText(t))
	}
	root := mainContent(doc)
	prune(root, false)
	switch format {
	case "html":
		var b strings.Builder
		if err := nethtml.Render(&b, root); err != nil {
			return "", "", wield.Errorf(wield.ErrExecution, "render HTML: %v", err)
		}
		return title, b.String(), nil
	case "text":
		return title, plainText(root), nil
	}
	md, err := markdownConverter.ConvertNode(root, converter.WithDomain(pageURL))
	if err != nil {
		return "", "", wield.Errorf(wield.ErrExecution, "convert HTML to Markdown: %v", err)
	}
	return title, strings.TrimSpace(string(md)), nil
}

// mainContent picks the node that holds the page's content: <main> (or
// role=main), else the only <article>, else <body>.
func mainContent(doc *nethtml.Node) *nethtml.Node {
	if m := findNode(doc, func(n *nethtml.Node) bool { return n.DataAtom == atom.Main || attr(n, "role") == "main" }); m != nil {
		return m
	}
	var articles []*nethtml.Node
	var walk func(*nethtml.Node)
	walk = func(n *nethtml.Node) {
		if n.Type == nethtml.ElementNode && n.DataAtom == atom.Article {
			articles = append(articles, n)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(articles) == 1 {
		return articles[0]
	}
	if b := findNode(doc, func(n *nethtml.Node) bool { return n.DataAtom == atom.Body }); b != nil {
		return b
	}
	return doc
}

// noise are elements that are never content.
var noise = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Aside: true, atom.Form: true, atom.Button: true, atom.Input: true,
	atom.Select: true, atom.Textarea: true, atom.Iframe: true, atom.Svg: true, atom.Dialog: true,
	atom.Object: true, atom.Embed: true, atom.Canvas: true, atom.Link: true, atom.Meta: true,
}

// noiseRoles are ARIA roles of navigation and page furniture.
var noiseRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true, "complementary": true,
	"search": true, "menu": true, "menubar": true, "dialog": true, "alert": true,
}

// prune removes the page furniture under n. Headers and footers go unless
// they belong to an article (where a header holds the title and byline).
func prune(n *nethtml.Node, inArticle bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == nethtml.CommentNode:
			n.RemoveChild(c)
		case c.Type != nethtml.ElementNode:
		case noise[c.DataAtom] || noiseRoles[attr(c, "role")] || attr(c, "aria-hidden") == "true" || hasAttr(c, "hidden"),
			!inArticle && (c.DataAtom == atom.Header || c.DataAtom == atom.Footer):
			n.RemoveChild(c)
		default:
			prune(c, inArticle || c.DataAtom == atom.Article)
		}
		c = next
	}
}

func hasAttr(n *nethtml.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// blocks are the elements that start a new line in plain text.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Br: true, atom.Li: true, atom.Tr: true, atom.Table: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Pre: true, atom.Blockquote: true, atom.Section: true, atom.Article: true, atom.Header: true,
	atom.Footer: true, atom.Ul: true, atom.Ol: true, atom.Dl: true, atom.Dt: true, atom.Dd: true,
	atom.Figure: true, atom.Figcaption: true, atom.Hr: true, atom.Main: true,
}

// plainText is the text of n with one line per block and spaces collapsed.
func plainText(n *nethtml.Node) string {
	var b strings.Builder
	var walk func(*nethtml.Node)
	walk = func(n *nethtml.Node) {
		switch n.Type {
		case nethtml.TextNode:
			b.WriteString(n.Data)
			return
		case nethtml.ElementNode:
			if blocks[n.DataAtom] {
				b.WriteByte('\n')
				defer b.WriteByte('\n')
			} else if n.DataAtom == atom.Td || n.DataAtom == atom.Th {
				defer b.WriteByte('\t')
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		// Table cells keep their tabs; other white space collapses.
		cells := strings.Split(l, "\t")
		for i, c := range cells {
			cells[i] = collapseSpace(c)
		}
		if l = strings.TrimRight(strings.Join(cells, "\t"), "\t"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// pdfText extracts the text of a PDF held in memory. The reader panics on
// some malformed files; that is an error here, not a crash.
// PDF reading is bounded: at most pdfMaxPages pages, pdfTimeout of work,
// and pdfSlots readings at once. The PDF library cannot be interrupted, so
// a hostile file that makes it spin keeps its goroutine busy after the
// timeout: that is why readings are few at a time, and refused while every
// slot is taken.
var (
	pdfMaxPages = 500
	pdfTimeout  = 10 * time.Second
	pdfSlots    = make(chan struct{}, 2)
)

// pdfText extracts a PDF's text within the bounds above.
func pdfText(data []byte) (string, error) {
	select {
	case pdfSlots <- struct{}{}:
	default:
		return "", fmt.Errorf("too many PDFs are being read right now (one may be malformed): try again later")
	}
	type answer struct {
		text string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() { <-pdfSlots }()
		text, err := pdfTextNow(data)
		done <- answer{text, err}
	}()
	timer := time.NewTimer(pdfTimeout)
	defer timer.Stop()
	select {
	case a := <-done:
		return a.text, a.err
	case <-timer.C:
		return "", fmt.Errorf("the PDF could not be read within %s (it may be malformed)", pdfTimeout)
	}
}

func pdfTextNow(data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("malformed PDF (%v)", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fmt.Errorf("not a readable PDF: %v", err)
	}
	var b strings.Builder
	for i := 1; i <= min(r.NumPage(), pdfMaxPages); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		if i > 1 {
			b.WriteString("\n\n")
		}
		pdfPageText(&b, p.Content().Text)
	}
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	text = strings.TrimSpace(strings.Join(lines, "\n"))
	if text == "" {
		return "", fmt.Errorf("the PDF has no extractable text (it may be scanned images)")
	}
	return text, nil
}

// pdfPageText writes a page's characters, in the order the page draws them,
// as lines: a change of baseline starts a line. Between two characters of a
// line a space is inferred from their positions (see pdfLineText).
func pdfPageText(b *strings.Builder, chars []pdf.Text) {
	start := 0
	for i := 1; i <= len(chars); i++ {
		if i < len(chars) {
			size := max(chars[i-1].FontSize, chars[i].FontSize, 1)
			if math.Abs(chars[i].Y-chars[i-1].Y) <= size*0.3 {
				continue
			}
		}
		if start > 0 && !strings.HasSuffix(b.String(), "\n") { // a TJ ends with one
			b.WriteByte('\n')
		}
		pdfLineText(b, chars[start:i])
		start = i
	}
}

// pdfLineText writes one line's characters with the spaces their positions
// show. With the font's widths, a gap wider than a fifth of the font size
// between one character's end and the next one's start is a space. A font
// without /Widths (the standard fonts may omit them) gives no widths: the
// reader then leaves every character of a string at the string's start, so
// only the writer's own moves (a TJ adjustment, a new Td) change X, and a
// forward move wider than the font's narrowest word space (0.15 em) is a
// space ("Kerned words here", not "Kernedwordshere"). A line whose every
// character stands alone at its own position was placed glyph by glyph:
// there a space is a move clearly wider than the line's usual one.
func pdfLineText(b *strings.Builder, chars []pdf.Text) {
	// Moves between runs of characters at the same X, for the glyph-by-glyph
	// case.
	var moves []float64
	runs, long := 0, false
	for i := 1; i < len(chars); i++ {
		if chars[i-1].W > 0 {
			continue
		}
		size := max(chars[i-1].FontSize, chars[i].FontSize, 1)
		if d := chars[i].X - chars[i-1].X; math.Abs(d) > size*1e-3 {
			moves = append(moves, d/size)
			runs++
		} else {
			long = true
		}
	}
	perGlyph := !long && runs >= 3
	typical := 0.0
	if perGlyph {
		sorted := slices.Clone(moves)
		slices.Sort(sorted)
		typical = sorted[len(sorted)/2]
	}
	for i, c := range chars {
		if i > 0 {
			prev := chars[i-1]
			size := max(prev.FontSize, c.FontSize, 1)
			space := false
			switch {
			case prev.S == " " || c.S == " " || prev.S == "\n" || c.S == "\n":
			case prev.W > 0:
				space = c.X-(prev.X+prev.W) > size*0.2
			case perGlyph:
				space = (c.X-prev.X)/size > max(typical*1.4, typical+0.15)
			default:
				space = c.X-prev.X > size*0.15
			}
			if space {
				b.WriteByte(' ')
			}
		}
		b.WriteString(c.S)
	}
}
