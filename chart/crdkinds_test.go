package chart

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Minimal Go shapes of the custom kinds the chart renders: only the fields the
// chart may set, so a misspelt or misplaced field fails strict decoding. The
// real CRD schemas check the same objects in crdschema_test.go.

type compositeController struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		GenerateSelector    bool  `json:"generateSelector"`
		ResyncPeriodSeconds int32 `json:"resyncPeriodSeconds"`
		ParentResource      struct {
			APIVersion    string                `json:"apiVersion"`
			Resource      string                `json:"resource"`
			LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
		} `json:"parentResource"`
		ChildResources []ccChild `json:"childResources"`
		Hooks          struct {
			Sync      *ccHook `json:"sync"`
			Customize *ccHook `json:"customize"`
		} `json:"hooks"`
	} `json:"spec"`
}

type ccChild struct {
	APIVersion     string `json:"apiVersion"`
	Resource       string `json:"resource"`
	UpdateStrategy struct {
		Method string `json:"method"`
	} `json:"updateStrategy"`
}

type ccHook struct {
	Version string `json:"version"`
	Webhook struct {
		Service struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
			Port      int32  `json:"port"`
			Protocol  string `json:"protocol"`
		} `json:"service"`
		Path      string       `json:"path"`
		Timeout   string       `json:"timeout"`
		CABundle  *ccCABundle  `json:"caBundle,omitempty"`
		ClientTLS *ccClientTLS `json:"clientTLS,omitempty"`
	} `json:"webhook"`
}

type ccCABundle struct {
	SecretRef struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		Key       string `json:"key"`
	} `json:"secretRef"`
}

type ccClientTLS struct {
	SecretRef struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"secretRef"`
}

type traefikService struct {
	Name      string             `json:"name"`
	Namespace string             `json:"namespace,omitempty"`
	Port      intstr.IntOrString `json:"port"`
}

type ingressRoute struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		EntryPoints []string `json:"entryPoints"`
		Routes      []struct {
			Kind        string `json:"kind"`
			Match       string `json:"match"`
			Priority    int    `json:"priority"`
			Middlewares []struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace,omitempty"`
			} `json:"middlewares"`
			Services []traefikService `json:"services"`
		} `json:"routes"`
	} `json:"spec"`
}

type middleware struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Errors *struct {
			Status  []string       `json:"status"`
			Query   string         `json:"query"`
			Service traefikService `json:"service"`
		} `json:"errors,omitempty"`
		ReplacePath *struct {
			Path string `json:"path"`
		} `json:"replacePath,omitempty"`
	} `json:"spec"`
}

type serviceMonitor struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// customResourceDefinition reads the parts of a CRD the tests look at; the
// rest of a CRD is legitimately anything, so it is decoded loosely.
type customResourceDefinition struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Group string `json:"group"`
		Names struct {
			Kind       string   `json:"kind"`
			Plural     string   `json:"plural"`
			ShortNames []string `json:"shortNames"`
		} `json:"names"`
		Scope    string `json:"scope"`
		Versions []struct {
			Name         string `json:"name"`
			Served       bool   `json:"served"`
			Storage      bool   `json:"storage"`
			Subresources struct {
				Status *struct{} `json:"status"`
			} `json:"subresources"`
			Schema struct {
				OpenAPIV3Schema *openAPISchema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

type prometheusRule struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Groups []struct {
			Name  string      `json:"name"`
			Rules []alertRule `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}
