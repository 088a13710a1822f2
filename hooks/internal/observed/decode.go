package observed

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The input is what Metacontroller sends: the body its Go client marshals
// with encoding/json (valid UTF-8, each member once, names as the API server
// stores them: it prunes every field its schema does not know, so no object
// it serves spells a name in another case). The hook reads that input with
// one decoder, github.com/go-json-experiment/json (the encoding/json v2
// prototype, which k8s.io/apimachinery already requires; Go 1.26 ships it as
// encoding/json/v2 only under GOEXPERIMENT=jsonv2), which validates as it
// decodes, in one pass. What Metacontroller never sends is refused, not
// mirrored: a member given twice, or twice in two cases of one field, and
// invalid UTF-8 are a 400 naming the member (walk.go). A lone name of a field
// in another case inside an object reads as encoding/json reads it; outside
// the objects, in the envelope, it is refused as well.

// objectOptions are how every object of a request (the parent, each child
// and related object) is decoded: encoding/json's semantics (names matched
// without regard to case, null a no-op, its methods called) but duplicate
// names and invalid UTF-8 refused, errors reported as json/v2's (with the
// JSON pointer of the member), and metav1.Time decoded without its
// UnmarshalJSON (a nested encoding/json.Unmarshal for each timestamp) but as
// it decodes a string: RFC 3339, in local time.
var objectOptions = jsonv2.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
	jsonv1.ReportErrorsWithLegacySemantics(false),
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

// unmarshal decodes one object b into *v with objectOptions.
func unmarshal(b []byte, v any) error { return jsonv2.Unmarshal(b, v, objectOptions) }

// TypeError says in one line what a JSON decoding error found: for a value
// of the wrong type, "field f: cannot use a JSON kind as type", f the
// member's path with dots (the wording of encoding/json's errors, which
// status messages have always used), else the error without its package's
// prefix.
func TypeError(err error) string {
	var se *jsonv2.SemanticError
	if errors.As(err, &se) && se.GoType != nil && se.JSONKind != 0 && (se.Err == nil || errors.Is(se.Err, strconv.ErrRange) || errors.Is(se.Err, strconv.ErrSyntax)) {
		field := strings.ReplaceAll(strings.TrimPrefix(string(se.JSONPointer), "/"), "/", ".")
		return fmt.Sprintf("field %s: cannot use a JSON %s as %s", field, kindName(se.JSONKind, se.JSONValue), se.GoType)
	}
	var ute *json.UnmarshalTypeError // from the callers that decode with encoding/json
	if errors.As(err, &ute) {
		return fmt.Sprintf("field %s: cannot use a JSON %s as %s", ute.Field, ute.Value, ute.Type)
	}
	s := err.Error()
	for _, prefix := range []string{"jsontext: ", "json: "} {
		s = strings.TrimPrefix(s, prefix)
	}
	return s
}

// kindName names a JSON kind as encoding/json's errors do: a number with its
// value.
func kindName(k jsontext.Kind, v jsontext.Value) string {
	switch k {
	case '"':
		return "string"
	case '0':
		if len(v) > 0 {
			return "number " + string(v)
		}
		return "number"
	case 't', 'f':
		return "bool"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "null"
}
