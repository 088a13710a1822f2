package observed

import (
	"encoding/json"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Decoding is the hook's CPU: a sync request of a small app is some tens of
// KB of JSON, most of it managedFields, specs and statuses the hook skips.
// encoding/json reads each byte twice (checkValid, then the decode, whose
// skipping is as slow as its scanning) and each nested json.Unmarshal does
// both again. The request is therefore decoded with
// github.com/go-json-experiment/json (the encoding/json v2 prototype, which
// k8s.io/apimachinery already requires) in encoding/json's own semantics
// (jsonv1.DefaultOptionsV1: names without regard to case, duplicates
// allowed, invalid UTF-8 replaced, null a no-op, its methods called): one
// pass that validates as it decodes. Whatever it refuses is decoded again
// with encoding/json, so that what a request decodes into, and every error
// a refusal or a status quotes, stay encoding/json's (FuzzFastDecode holds
// the two decoders to the same values and the same refusals).

// fastOptions are encoding/json's semantics, and metav1.Time decoded
// without its UnmarshalJSON (which runs a nested encoding/json.Unmarshal
// for each timestamp) but as it decodes a string: RFC 3339, in local time.
var fastOptions = jsonv2.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(decodeTime)),
)

// decodeTime is metav1.Time.UnmarshalJSON for a JSON string; anything else
// (null, a value of the wrong kind) it leaves to that method.
func decodeTime(dec *jsontext.Decoder, t *metav1.Time) error {
	if dec.PeekKind() != '"' {
		return jsonv2.SkipFunc
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	pt, err := time.Parse(time.RFC3339, tok.String())
	if err != nil {
		return err
	}
	t.Time = pt.Local()
	return nil
}

// unmarshal decodes b into *v as json.Unmarshal does: the same value, and
// an error exactly when json.Unmarshal's, which it returns. *v must be its
// zero value; on an error it is what json.Unmarshal leaves.
func unmarshal[T any](b []byte, v *T) error {
	if unmarshalFast(b, v) == nil {
		return nil
	}
	var zero T
	*v = zero
	return json.Unmarshal(b, v)
}

// unmarshalFast is the one pass alone: what encoding/json would decode, or
// an error where encoding/json would return one (not the same error).
func unmarshalFast(b []byte, v any) error { return jsonv2.Unmarshal(b, v, fastOptions) }
