package observed

// The names of a resource's children besides the ones named after it (the
// workload, its Service, its IngressRoute). The children are built under
// them and the request is searched for them by them.

// HeadlessName is the StatefulSet's governing Service.
func HeadlessName(name string) string { return name + "-headless" }

// MiddlewareName is the errors Middleware of a resource.
func MiddlewareName(name string) string { return name + "-errors" }

// ErrorPagesName is the mirrored error-page Service and EndpointSlice of a
// resource.
func ErrorPagesName(name string) string { return name + "-error-pages" }

// StripName, HTTPSName and RedirectName name the routing helpers of a
// resource: its stripPrefix and redirectScheme Middlewares and its
// plain-HTTP redirect IngressRoute.
func StripName(name string) string    { return name + "-strip" }
func HTTPSName(name string) string    { return name + "-https" }
func RedirectName(name string) string { return name + "-redirect" }
