package hooks

import "github.com/stackdome/stackdome/internal/mcrequest"

// teamObjects are the teams' own objects in the apps' namespaces, as the
// API server stores them: the customize hook relates the ConfigMaps and
// Secrets a valid spec uses and the Middlewares a spec with public ports
// names, by name in the parent's namespace; a rule's group is there
// whenever the rule is, empty when none of its objects exists.
func teamObjects() []mcrequest.Object {
	return []mcrequest.Object{
		teamMiddleware("finance", "sso-auth", `{"forwardAuth":{"address":"http://sso.auth.svc:4180/oauth2/auth","trustForwardHeader":true}}`, 1),
		teamMiddleware("payments", "payments-sso", `{"forwardAuth":{"address":"http://sso.auth.svc:4180/oauth2/auth","trustForwardHeader":true,`+
			`"authResponseHeaders":["X-Auth-Request-User","X-Auth-Request-Email"]}}`, 2),
		teamMiddleware("payments", "payments-rate-limit", `{"rateLimit":{"average":100,"burst":200}}`, 3),

		teamConfigMap("apps", "notes-config", map[string]string{"NOTES_PAGE_SIZE": "50", "NOTES_THEME": "dark"}, 1, nil),
		teamSecret("apps", "notes-secrets", map[string]string{"API_TOKEN": "bm90LWEtcmVhbC10b2tlbg=="}, 2),
		teamConfigMap("apps", "notes-files", map[string]string{"notes.yaml": "listen: :8080\nstorage: /data\n"}, 3, nil),
		teamSecret("apps", "notes-tls", map[string]string{"tls.crt": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==", "tls.key": "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCg=="}, 4),
		teamConfigMap("payments", "payments-settings", map[string]string{"CURRENCY": "EUR", "FEATURE_REFUNDS": "true"}, 5, nil),
		teamSecret("payments", "payments-db", map[string]string{"DATABASE_URL": "cG9zdGdyZXM6Ly9wYXltZW50czpub3QtYS1yZWFsLXBhc3N3b3JkQGRiL3BheW1lbnRz"}, 6),
		teamConfigMap("payments", "payments-config", map[string]string{"config.yaml": "listen: :8080\nwebhooks: :8081\n"}, 7, nil),
		teamSecret("payments", "payments-signing-key", map[string]string{"key.pem": "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCg=="}, 8),
		teamSecret("billing", "invoices-db", map[string]string{"DATABASE_URL": "cG9zdGdyZXM6Ly9pbnZvaWNlc0BkYi9pbnZvaWNlcw=="}, 9),
		teamConfigMap("shop", "cart-config", map[string]string{"cart.yaml": "ttl: 30m\n"}, 10, map[string][]byte{"logo.png": b64("iVBORw0KGgo=")}),
		teamConfigMap("shop", "cart-flags", map[string]string{"FLAG_EXPRESS": "on"}, 11, nil),
		teamSecret("shop", "cart-db", map[string]string{"password": "bm90LWEtcmVhbC1wYXNzd29yZA=="}, 12),
		teamSecret("shop", "search-key", map[string]string{"key": "bm90LWEta2V5"}, 13),
		teamConfigMap("payments", "payments-flags", map[string]string{"REFUNDS_V2": "off", "SEPA_INSTANT": "on"}, 14, nil),
		teamSecret("shop", "oauth2-proxy", map[string]string{"cookie-secret": "bm90LWEtc2VjcmV0"}, 14),
		teamSecret("shop", "orders-sql", map[string]string{"credentials.json": "e30="}, 15),
		teamSecret("data", "warehouse-db", map[string]string{"url": "cG9zdGdyZXM6Ly8="}, 16),
	}
}
