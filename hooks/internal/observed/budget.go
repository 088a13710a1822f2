package observed

import "fmt"

// Budget bounds what one sync request may make the hook decode: decoding
// costs a multiple of the bytes it reads and a fixed amount per object, so a
// body under the size limit can still cost hundreds of MiB (a 9 MB request of
// minimal pods decoded into 549 MiB). Zero fields take the defaults of
// DefaultBudget.
type Budget struct {
	// ObjectsPerGroup bounds the objects of one group of children or of
	// related objects other than pods (a StackResource has a handful of
	// children; its related objects are the ConfigMaps, Secrets and
	// Middlewares its spec names, which the CRD bounds).
	ObjectsPerGroup int
	// BytesPerObject bounds the JSON of one child or related object. The
	// parent is bounded by the body limit alone: a spec past the CRD's
	// limits is answered as an invalid spec, in status (schema.Validate),
	// which a 413 would not say.
	BytesPerObject int
	// PodsPerSync bounds the related pods of one request.
	PodsPerSync int
}

// DefaultBudget is the budget of a request. BytesPerObject is 2 MiB, above
// the 1.5 MiB etcd stores at most by default (an object the API server holds
// fits, re-encoded by Metacontroller); ObjectsPerGroup 1,000, a hundred times
// the most a spec the CRD admits can relate of one kind; PodsPerSync 10,000,
// the largest app docs/performance.md measured.
var DefaultBudget = Budget{ObjectsPerGroup: 1000, BytesPerObject: 2 << 20, PodsPerSync: 10000}

// BudgetError is a request over its Budget: Budget names the exceeded field
// (objects per group, bytes per object, pods per sync), Where the object or
// group, Got what the request holds and Limit the budget.
type BudgetError struct {
	Budget     string
	Where      string
	Got, Limit int
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("request over budget: %s holds %d %s, over the budget of %d", e.Where, e.Got, e.Budget, e.Limit)
}

func (b Budget) withDefaults() Budget {
	if b.ObjectsPerGroup <= 0 {
		b.ObjectsPerGroup = DefaultBudget.ObjectsPerGroup
	}
	if b.BytesPerObject <= 0 {
		b.BytesPerObject = DefaultBudget.BytesPerObject
	}
	if b.PodsPerSync <= 0 {
		b.PodsPerSync = DefaultBudget.PodsPerSync
	}
	return b
}

// Check measures a sync request body against b: the walk of the body
// (walk.go) without decoding any object. It returns a *BudgetError for the
// first budget the body exceeds, another error for a body that is not a sync
// request as Metacontroller sends one, and nil for one Decode reads.
func (b Budget) Check(body []byte) error {
	_, err := b.Measure(body)
	return err
}

// Measure is Check, and the number of children and related objects the body
// holds.
func (b Budget) Measure(body []byte) (objects int, err error) {
	_, objects, err = b.walk(body)
	return objects, err
}

// clip keeps a name from the request short enough for a one-line refusal.
func clip(s string) string {
	if len(s) > 64 {
		return s[:61] + "..."
	}
	return s
}
