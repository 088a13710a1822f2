package errorpages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
)

// Brands is the brand file the chart renders (serve --brands-file): every
// brand the page server draws, and the one that answers a request naming
// none or one it does not know. It holds no credential and nothing secret:
// whatever it says is shown to the internet.
type Brands struct {
	// Default names the brand of a request without ?brand= or with an
	// unknown one; empty means the first brand.
	Default string  `json:"default,omitempty"`
	Brands  []Brand `json:"brands"`
}

// Brand is how the pages of one brand look: every field is plain text or a
// value checked by [LoadBrands], and each is escaped by html/template where
// it is drawn.
type Brand struct {
	// Name is what a StackResource's spec.errorPages.brand says, and what the
	// errors Middleware sends as ?brand=: a DNS label.
	Name string `json:"name"`
	// DisplayName is drawn beside the logo at the top of every page.
	DisplayName string `json:"displayName"`
	// Logo is drawn before DisplayName; without one, stackdome's mark.
	Logo *Logo `json:"logo,omitempty"`
	// Colors replace the accent (and, if set, the background) in each scheme.
	Colors *Colors `json:"colors,omitempty"`
	// Support is a link or a contact line in the footer.
	Support *Support `json:"support,omitempty"`
	// Pages replace the headline (title) and the first paragraph (text) of
	// the page of a code, keyed "400" to "599".
	Pages map[string]PageText `json:"pages,omitempty"`
}

// Logo is an inline image: one of SVG (the document's text) or PNG (the
// file, base64). Either is drawn as an <img> of a data: URL, so the page
// still loads nothing and an SVG's scripts never run.
type Logo struct {
	SVG string `json:"svg,omitempty"`
	PNG string `json:"png,omitempty"`
}

// Colors are the brand's colours in light and in dark mode.
type Colors struct {
	Light *Palette `json:"light,omitempty"`
	Dark  *Palette `json:"dark,omitempty"`
}

// Palette is one scheme's colours, each #rgb or #rrggbb. Accent is
// required; Accent2 (the gradient's end) defaults to Accent; OnAccent is the
// button's text.
type Palette struct {
	Accent     string `json:"accent"`
	Accent2    string `json:"accent2,omitempty"`
	OnAccent   string `json:"onAccent,omitempty"`
	Background string `json:"background,omitempty"`
}

// Support is the footer's contact: a link (https: or mailto:) with Text as
// its label, or Text alone.
type Support struct {
	URL  string `json:"url,omitempty"`
	Text string `json:"text,omitempty"`
}

// PageText replaces a page's headline and lead paragraph.
type PageText struct {
	Title string `json:"title,omitempty"`
	Text  string `json:"text,omitempty"`
}

// Limits of a brand file. A page is rendered for every code and brand at
// start-up and held in memory twice (with and without the request-id slot):
// about 200 × 2 × (3.6 KiB + 4/3 of the logo) a brand, 1.6 MB for the
// brands of testdata/brands.json (BenchmarkServeBranded), at most ≈ 3.6 MB
// with a 4 KiB logo, ≈ 29 MB for 8 such brands. So both the logo and the
// number of brands are bounded.
const (
	MaxBrands          = 8
	MaxLogoBytes       = 4 << 10 // the SVG text or the decoded PNG
	MaxDisplayNameLen  = 64
	MaxTitleLen        = 120
	MaxTextLen         = 400
	MaxSupportTextLen  = 160
	MaxSupportURLLen   = 256
	maxBrandsFileBytes = 1 << 20
)

// DefaultBrandName names the brand drawn when no brand file is given.
const DefaultBrandName = "stackdome"

// DefaultBrands is the brand set without a brand file: stackdome's own,
// drawn exactly as the embedded pages are.
func DefaultBrands() *Brands {
	return &Brands{Default: DefaultBrandName, Brands: []Brand{{Name: DefaultBrandName, DisplayName: "stackdome"}}}
}

var (
	brandNameRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	colorRe     = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)
	pngMagic    = []byte("\x89PNG\r\n\x1a\n")
)

// LoadBrands reads a brand file (JSON, at most 1 MiB, no unknown field) and
// checks every field: it returns an error naming each one that is wrong —
// a logo too large or not an image, a colour that is not a colour, text
// with markup or too long, a duplicate or unknown brand name.
func LoadBrands(r io.Reader) (*Brands, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBrandsFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the brand file: %w", err)
	}
	if len(b) > maxBrandsFileBytes {
		return nil, fmt.Errorf("the brand file is over %d bytes", maxBrandsFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var bs Brands
	if err := dec.Decode(&bs); err != nil {
		return nil, fmt.Errorf("decoding the brand file: %w", err)
	}
	if err := bs.Validate(); err != nil {
		return nil, err
	}
	return &bs, nil
}
