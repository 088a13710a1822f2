package schema

// The children of a StackResource <name> that are not named <name> itself
// (as its workload, Service and IngressRoute are) are named <name> and a
// suffix. This file is the one statement of those suffixes: the hook
// builds the children under these names (hooks/internal/children), finds
// them in the request by them (hooks/internal/observed), Validate refuses a
// spec.middlewares entry that would be one of them, and a test holds the
// CRD's CEL rules, which must state them as literals, to this list.
const (
	// HeadlessSuffix names the StatefulSet's governing (headless) Service.
	HeadlessSuffix = "-headless"
	// ErrorPagesSuffix names the mirrored error-page Service and
	// EndpointSlice.
	ErrorPagesSuffix = "-error-pages"
	// RedirectSuffix names the plain-HTTP IngressRoute that redirects to
	// HTTPS.
	RedirectSuffix = "-redirect"
	// ErrorsSuffix names the errors Middleware.
	ErrorsSuffix = "-errors"
	// StripSuffix names the stripPrefix Middleware.
	StripSuffix = "-strip"
	// HTTPSSuffix names the redirectScheme Middleware.
	HTTPSSuffix = "-https"
)

// reservedNameSuffixes name children of a kind a StackResource also makes
// under its own name (Services, an IngressRoute): a StackResource named
// <other><suffix> would make the child of <other>.
var reservedNameSuffixes = [...]string{HeadlessSuffix, ErrorPagesSuffix, RedirectSuffix}

// middlewareSuffixes name the Middlewares stackdome makes for a resource:
// a spec.middlewares entry naming <name><suffix> would be stackdome's own.
var middlewareSuffixes = [...]string{ErrorsSuffix, StripSuffix, HTTPSSuffix}

// ReservedNameSuffixes are the suffixes a StackResource's name may not end
// in, in the order the CRD's message names them. The CRD refuses such a
// name at creation; the slice is new on each call.
func ReservedNameSuffixes() []string { return append([]string(nil), reservedNameSuffixes[:]...) }

// MiddlewareSuffixes are the suffixes of the Middlewares stackdome makes
// for a resource <name>, which spec.middlewares may not name
// (ValidateChildNames, and the CRD). The slice is new on each call.
func MiddlewareSuffixes() []string { return append([]string(nil), middlewareSuffixes[:]...) }

// HeadlessName is the StatefulSet's governing Service of the resource name.
func HeadlessName(name string) string { return name + HeadlessSuffix }

// ErrorPagesName is the mirrored error-page Service and EndpointSlice of
// the resource name.
func ErrorPagesName(name string) string { return name + ErrorPagesSuffix }

// RedirectName is the plain-HTTP redirect IngressRoute of the resource
// name.
func RedirectName(name string) string { return name + RedirectSuffix }

// MiddlewareName is the errors Middleware of the resource name.
func MiddlewareName(name string) string { return name + ErrorsSuffix }

// StripName is the stripPrefix Middleware of the resource name.
func StripName(name string) string { return name + StripSuffix }

// HTTPSName is the redirectScheme Middleware of the resource name.
func HTTPSName(name string) string { return name + HTTPSSuffix }
