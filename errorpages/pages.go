package errorpages

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"strconv"
)

//go:embed pages/*.html
var embedded embed.FS

// pageCodes are the codes with a page of their own. Every other 4xx is drawn
// with the 404 page and every other 5xx with the 500 page, showing its own
// code and reason phrase.
var pageCodes = []int{404, 500, 502, 503}

const (
	minCode = 400
	maxCode = 599
)

// idSlot stands in for the request id when a page is rendered at start-up.
// It is made only of characters a valid id may hold, so html/template and
// encoding/json leave it, like any valid id, unescaped; the rendered bytes are
// split around it and a request's id is written into the gaps.
const idSlot = "RequestIdSlot.f3c9a1d7"

// answer is one code in one format, rendered once.
type answer struct {
	bare      []byte   // without a request id
	bareLen   []string // len(bare) as a Content-Length value; len == cap, see hdrVary
	withID    [][]byte // with a request id: the pieces around each occurrence
	withIDLen int      // the sum of len(withID[i])
}

// size is the length of the answer for id, which must already be valid.
func (a *answer) size(id string) int {
	if id == "" {
		return len(a.bare)
	}
	return a.withIDLen + len(id)*(len(a.withID)-1)
}

// write sends the answer for id, which must already be valid. With an id it
// writes the pieces and the id in turn: the server buffers them, and no
// per-request copy of the page is made.
func (a *answer) write(w io.Writer, id string) {
	// A write error means the client left; there is no one to tell.
	if id == "" {
		_, _ = w.Write(a.bare)
		return
	}
	for i, part := range a.withID {
		if i > 0 {
			_, _ = io.WriteString(w, id)
		}
		_, _ = w.Write(part)
	}
}

func newAnswer(bare, withID []byte) (answer, error) {
	parts := bytes.Split(withID, []byte(idSlot))
	if len(parts) < 2 {
		return answer{}, fmt.Errorf("request id slot missing from the rendered answer")
	}
	if bytes.Contains(bare, []byte(idSlot)) {
		return answer{}, fmt.Errorf("request id slot present in the answer without an id")
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return answer{bare: bare, bareLen: []string{strconv.Itoa(len(bare))}, withID: parts, withIDLen: n}, nil
}

// answers holds every code from 400 to 599 in both formats, for one brand.
type answers [2][maxCode - minCode + 1]answer

func (t *answers) get(f Format, code int) *answer { return &t[f][code-minCode] }

// pageData is what a page template sees.
type pageData struct {
	Code      int
	Reason    string
	Theme     string // the code of the page whose design is used: "404", "500", …
	RequestID string
	Brand     brandView
	Title     string // the brand's headline for this code, if it has one
	Text      string // the brand's lead paragraph for this code, if it has one
}

// brandView is a checked Brand as the layout draws it.
type brandView struct {
	DisplayName string
	Logo        template.URL // a data: URL built by logoURL, or ""
	Light, Dark *Palette
	Support     *Support
}

func newBrandView(b Brand) (brandView, error) {
	v := brandView{DisplayName: b.DisplayName, Support: b.Support}
	if b.Logo != nil {
		u, err := logoURL(*b.Logo)
		if err != nil {
			return v, err
		}
		v.Logo = u
	}
	if c := b.Colors; c != nil {
		v.Light, v.Dark = withAccent2(c.Light), withAccent2(c.Dark)
	}
	return v, nil
}

// withAccent2 is p with the gradient's end defaulted to the accent.
func withAccent2(p *Palette) *Palette {
	if p == nil {
		return nil
	}
	c := *p
	if c.Accent2 == "" {
		c.Accent2 = c.Accent
	}
	return &c
}

// renderBrands draws every brand of bs from the templates in fsys. The JSON
// answers do not depend on the brand: every brand shares the first one's.
func renderBrands(fsys fs.FS, bs *Brands) (map[string]*answers, error) {
	out := make(map[string]*answers, len(bs.Brands))
	var shared *answers
	for i, b := range bs.Brands {
		t, err := render(fsys, b)
		if err != nil {
			return nil, fmt.Errorf("brand %q: %w", b.Name, err)
		}
		if i == 0 {
			shared = t
		} else {
			t[JSON] = shared[JSON]
		}
		out[b.Name] = t
	}
	return out, nil
}

// render draws every answer of brand b from the templates in fsys:
// pages/layout.html and one pages/<code>.html for each of pageCodes.
func render(fsys fs.FS, b Brand) (*answers, error) {
	view, err := newBrandView(b)
	if err != nil {
		return nil, err
	}
	layout, err := template.ParseFS(fsys, "pages/layout.html")
	if err != nil {
		return nil, fmt.Errorf("parsing the page layout: %w", err)
	}
	pages := make(map[int]*template.Template, len(pageCodes))
	for _, code := range pageCodes {
		t, err := layout.Clone()
		if err != nil {
			return nil, fmt.Errorf("cloning the page layout: %w", err)
		}
		if _, err := t.ParseFS(fsys, fmt.Sprintf("pages/%d.html", code)); err != nil {
			return nil, fmt.Errorf("parsing page %d: %w", code, err)
		}
		pages[code] = t
	}

	t := new(answers)
	for code := minCode; code <= maxCode; code++ {
		theme := code
		if pages[theme] == nil {
			theme = code / 100 * 100
			if theme == 400 {
				theme = 404
			}
		}
		d := pageData{Code: code, Reason: reason(code), Theme: strconv.Itoa(theme), Brand: view}
		if pt, ok := b.Pages[strconv.Itoa(code)]; ok {
			d.Title, d.Text = pt.Title, pt.Text
		}
		page := pages[theme]

		var bare, withID bytes.Buffer
		if err := page.ExecuteTemplate(&bare, "layout.html", d); err != nil {
			return nil, fmt.Errorf("rendering page %d: %w", code, err)
		}
		d.RequestID = idSlot
		if err := page.ExecuteTemplate(&withID, "layout.html", d); err != nil {
			return nil, fmt.Errorf("rendering page %d with a request id: %w", code, err)
		}
		if t[HTML][code-minCode], err = newAnswer(bare.Bytes(), withID.Bytes()); err != nil {
			return nil, fmt.Errorf("page %d: %w", code, err)
		}

		jsonBare, err := envelope(code, "")
		if err != nil {
			return nil, err
		}
		jsonID, err := envelope(code, idSlot)
		if err != nil {
			return nil, err
		}
		if t[JSON][code-minCode], err = newAnswer(jsonBare, jsonID); err != nil {
			return nil, fmt.Errorf("json %d: %w", code, err)
		}
	}
	return t, nil
}

// envelope is the JSON answer: {"error":{"code":N,"message":"…","requestId":"…"}}.
func envelope(code int, requestID string) ([]byte, error) {
	type errorBody struct {
		Code      int    `json:"code"`
		Message   string `json:"message"`
		RequestID string `json:"requestId,omitempty"`
	}
	b, err := json.Marshal(struct {
		Error errorBody `json:"error"`
	}{errorBody{Code: code, Message: reason(code), RequestID: requestID}})
	if err != nil {
		return nil, fmt.Errorf("encoding the json answer for %d: %w", code, err)
	}
	return append(b, '\n'), nil
}

// reason is the code's reason phrase, or its family's when Go knows none.
func reason(code int) string {
	if r := http.StatusText(code); r != "" {
		return r
	}
	if code < 500 {
		return "Client Error"
	}
	return "Server Error"
}
