package observed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/stackdome/stackdome/metacontroller"
)

// walk splits a sync request body into its parent and the bytes of each
// child and related object, measuring them against b as it goes: one pass of
// jsontext over the body, which validates it whole (the objects' insides
// included) and allocates nothing for what it skips. Its error is a
// *BudgetError for the first budget the body exceeds, else one line saying
// why the body is not a sync request as Metacontroller sends one: not JSON,
// not an object, a member of the envelope of the wrong kind or named in
// another case ("Parent"), any member given twice, invalid UTF-8, data after
// the object. The slices of the result alias body; objects counts the
// children and related objects. Controller is skipped: the hook never reads
// it.
func (b Budget) walk(body []byte) (req metacontroller.SyncRequest, objects int, err error) {
	b = b.withDefaults()
	dec := newDecoder(body)
	defer freeDecoder(dec)
	w := walker{dec: dec, body: body, budget: b}
	if err := w.open("the body"); err != nil {
		return req, 0, err
	}
	for w.dec.PeekKind() != '}' {
		name, err := w.name()
		if err != nil {
			return req, 0, err
		}
		switch name {
		case "parent":
			req.Parent, err = w.value()
		case "children":
			req.Children, err = w.groups(name)
		case "related":
			req.Related, err = w.groups(name)
		case "finalizing":
			// Read for its type alone, as a SyncRequest reads it: the hook
			// answers a finalizing sync as any other.
			if k := w.dec.PeekKind(); k != 't' && k != 'f' && k != 'n' && k != 0 {
				return req, 0, fmt.Errorf("decoding request: member %q: a JSON %s, not a bool", name, kindName(k, nil))
			}
			_, err = w.dec.ReadToken()
		default:
			for _, known := range []string{"controller", "parent", "children", "related", "finalizing"} {
				if name != known && strings.EqualFold(name, known) {
					return req, 0, fmt.Errorf("decoding request: member %q: Metacontroller names it %q", name, known)
				}
			}
			err = w.dec.SkipValue()
		}
		if err != nil {
			return req, 0, w.refusal(err)
		}
	}
	if _, err := w.dec.ReadToken(); err != nil {
		return req, 0, w.refusal(err)
	}
	if _, err := w.dec.ReadToken(); err != io.EOF {
		return req, 0, fmt.Errorf("decoding request: data after the top-level value, at offset %d", w.dec.InputOffset())
	}
	return req, w.objects, nil
}

// decoders are the walk's decoders, reused between requests: a decoder keeps
// the buffers that track each object's names (to refuse one given twice).
var decoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

// noInput is what a decoder in decoders reads: nothing, so that it holds no
// body.
var noInput = bytes.NewReader(nil)

// newDecoder is a decoder of decoders reading b in place (a bytes.Buffer is
// read without a copy); give it back with freeDecoder.
func newDecoder(b []byte) *jsontext.Decoder {
	dec := decoders.Get().(*jsontext.Decoder)
	dec.Reset(bytes.NewBuffer(b))
	return dec
}

func freeDecoder(dec *jsontext.Decoder) {
	dec.Reset(noInput)
	decoders.Put(dec)
}

// walker is walk's state: the decoder over body, the budget, and the objects
// counted so far.
type walker struct {
	dec     *jsontext.Decoder
	body    []byte
	budget  Budget
	objects int
}

// refusal words an error of the walk: a *BudgetError as it is, anything else
// as a request that does not decode.
func (w *walker) refusal(err error) error {
	if err == nil {
		return nil
	}
	var over *BudgetError
	if errors.As(err, &over) || strings.HasPrefix(err.Error(), "decoding request: ") {
		return err
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err == io.ErrUnexpectedEOF {
		return errors.New("decoding request: unexpected end of JSON input")
	}
	return fmt.Errorf("decoding request: %s", TypeError(err))
}

// open reads the '{' of the object what names.
func (w *walker) open(what string) error {
	switch k := w.dec.PeekKind(); k {
	case '{':
		_, err := w.dec.ReadToken()
		return w.refusal(err)
	case 0:
		_, err := w.dec.ReadToken()
		return w.refusal(err)
	default:
		return fmt.Errorf("decoding request: %s is a JSON %s, not an object", what, kindName(k, nil))
	}
}

// name reads a member's name; jsontext refuses one given twice.
func (w *walker) name() (string, error) {
	tok, err := w.dec.ReadToken()
	if err != nil {
		return "", w.refusal(err)
	}
	return tok.String(), nil
}

// value reads one value and returns its bytes in the body.
func (w *walker) value() ([]byte, error) {
	v, err := w.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	end := int(w.dec.InputOffset())
	return w.body[end-len(v) : end], nil
}

// groups reads the children or related objects (section) by group and key,
// each object's bytes measured against the budget. A group given as null is
// there, empty, as encoding/json reads it.
func (w *walker) groups(section string) (metacontroller.Objects, error) {
	if w.dec.PeekKind() == 'n' {
		_, err := w.dec.ReadToken()
		return nil, err
	}
	if err := w.open(fmt.Sprintf("member %q", section)); err != nil {
		return nil, err
	}
	out := metacontroller.Objects{}
	for w.dec.PeekKind() != '}' {
		group, err := w.name()
		if err != nil {
			return nil, err
		}
		if w.dec.PeekKind() == 'n' {
			out[group] = nil
			if _, err := w.dec.ReadToken(); err != nil {
				return nil, err
			}
			continue
		}
		if err := w.open(fmt.Sprintf("%s %q", section, group)); err != nil {
			return nil, err
		}
		objs := map[string]json.RawMessage{}
		for w.dec.PeekKind() != '}' {
			key, err := w.name()
			if err != nil {
				return nil, err
			}
			raw, err := w.value()
			if err != nil {
				return nil, err
			}
			if err := w.count(section, group, key, len(raw), len(objs)+1); err != nil {
				return nil, err
			}
			objs[key] = raw
		}
		if _, err := w.dec.ReadToken(); err != nil {
			return nil, err
		}
		out[group] = objs
	}
	_, err := w.dec.ReadToken()
	return out, err
}

// count measures one object of size bytes, the n-th of its group, against
// the budget.
func (w *walker) count(section, group, key string, size, n int) error {
	b := w.budget
	if size > b.BytesPerObject {
		return &BudgetError{Budget: "bytes per object", Where: fmt.Sprintf("%s %s %q", section, clip(group), clip(key)), Got: size, Limit: b.BytesPerObject}
	}
	w.objects++
	limit, what := b.ObjectsPerGroup, "objects per group"
	if section == "related" && group == groupPod {
		limit, what = b.PodsPerSync, "pods per sync"
	}
	if n > limit {
		return &BudgetError{Budget: what, Where: fmt.Sprintf("%s %s", section, clip(group)), Got: n, Limit: limit}
	}
	return nil
}
