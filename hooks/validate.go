package hooks

import (
	"encoding/json"

	"github.com/stackdome/stackdome/hooks/internal/observed"
)

// Invalid is why Sync answers InvalidSpec for parent, a StackResource as
// the API server stores it, with its running children kept: a spec of the
// wrong shape, one schema.Validate refuses (a *schema.InvalidError, each
// problem at its field path), or a name its children cannot take. It is nil
// when Sync builds the children. A parent that cannot be read at all is an
// error too (Sync answers it with a *RequestError). Offline tools (stackdome
// render) ask it to refuse what the hook would refuse, by the hook's own
// rules.
func Invalid(parent json.RawMessage) error {
	p, err := observed.DecodeParent(parent)
	if err != nil {
		return malformed(err)
	}
	_, err = validSpec(p)
	return err
}
