package whiskapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Action is an OpenWhisk action as the API answers it.
type Action struct {
	Namespace   string     `json:"namespace"`
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	Publish     bool       `json:"publish"`
	Exec        Exec       `json:"exec"`
	Annotations []KeyValue `json:"annotations"`
	Parameters  []KeyValue `json:"parameters"`
	Limits      Limits     `json:"limits"`
	// Updated is the time of the last write, in milliseconds since the epoch.
	Updated int64 `json:"updated"`
}

// Exec is what an action would run: a kind (nodejs:20, python:3, blackbox, sequence, ...) and its
// code, image or components. This controller stores it; it runs nothing.
type Exec struct {
	Kind       string   `json:"kind"`
	Code       string   `json:"code,omitempty"`
	Image      string   `json:"image,omitempty"`
	Main       string   `json:"main,omitempty"`
	Components []string `json:"components,omitempty"`
	Binary     bool     `json:"binary"`
}

// KeyValue is a parameter or an annotation.
type KeyValue struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// Limits are an action's limits (OpenWhisk's defaults and ranges).
type Limits struct {
	Timeout     int `json:"timeout"`     // milliseconds, 100..300000 (default 60000)
	Memory      int `json:"memory"`      // megabytes, 128..512 (default 256)
	Logs        int `json:"logs"`        // megabytes, 0..10 (default 10)
	Concurrency int `json:"concurrency"` // 1..500 (default 1)
}

var defaultLimits = Limits{Timeout: 60000, Memory: 256, Logs: 10, Concurrency: 1}

// actionPut is the body of a PUT: every field optional; on an update the missing ones keep their
// values.
type actionPut struct {
	Exec        *Exec       `json:"exec"`
	Annotations *[]KeyValue `json:"annotations"`
	Parameters  *[]KeyValue `json:"parameters"`
	Limits      *struct {
		Timeout     *int `json:"timeout"`
		Memory      *int `json:"memory"`
		Logs        *int `json:"logs"`
		Concurrency *int `json:"concurrency"`
	} `json:"limits"`
	Publish *bool   `json:"publish"`
	Version *string `json:"version"`
}

// actionDoc is an action as CouchDB keeps it.
type actionDoc struct {
	ID         string `json:"_id"`
	Rev        string `json:"_rev,omitempty"`
	EntityType string `json:"entityType"`
	Action
}

// docID is the document id of action name in namespace ns, as OpenWhisk makes it.
func docID(ns, name string) string { return ns + "/" + name }

func checkExec(e *Exec) error {
	switch {
	case e.Kind == "":
		return fmt.Errorf("exec malformed: no kind")
	case e.Kind == "sequence":
		if len(e.Components) == 0 {
			return fmt.Errorf("No component specified for the sequence.")
		}
	case e.Kind == "blackbox":
		if e.Image == "" {
			return fmt.Errorf("exec malformed: blackbox without an image")
		}
	case !strings.Contains(e.Kind, ":"):
		return fmt.Errorf("exec malformed: kind %q is not <runtime>:<version>, blackbox or sequence", e.Kind)
	case e.Code == "":
		return fmt.Errorf("exec malformed: kind %s without code", e.Kind)
	}
	return nil
}

// apply merges a PUT body into a (a new action when it has no version) and checks the result.
func (p *actionPut) apply(a *Action) error {
	if p.Exec != nil {
		if err := checkExec(p.Exec); err != nil {
			return err
		}
		a.Exec = *p.Exec
	} else if a.Version == "" {
		return fmt.Errorf("exec undefined")
	}
	if p.Annotations != nil {
		a.Annotations = *p.Annotations
	}
	if p.Parameters != nil {
		a.Parameters = *p.Parameters
	}
	if p.Publish != nil {
		a.Publish = *p.Publish
	}
	if a.Limits == (Limits{}) {
		a.Limits = defaultLimits
	}
	if l := p.Limits; l != nil {
		for _, f := range []struct {
			v        *int
			dst      *int
			name     string
			min, max int
		}{
			{l.Timeout, &a.Limits.Timeout, "timeout", 100, 300000},
			{l.Memory, &a.Limits.Memory, "memory", 128, 512},
			{l.Logs, &a.Limits.Logs, "logs", 0, 10},
			{l.Concurrency, &a.Limits.Concurrency, "concurrency", 1, 500},
		} {
			if f.v == nil {
				continue
			}
			if *f.v < f.min || *f.v > f.max {
				return fmt.Errorf("%s limit %d exceeds allowed range [%d, %d].", f.name, *f.v, f.min, f.max)
			}
			*f.dst = *f.v
		}
	}
	for _, kv := range append(append([]KeyValue{}, a.Annotations...), a.Parameters...) {
		if kv.Key == "" {
			return fmt.Errorf("parameters and annotations need a key")
		}
		if len(kv.Value) == 0 {
			return fmt.Errorf("%q has no value", kv.Key)
		}
	}
	if a.Annotations == nil {
		a.Annotations = []KeyValue{}
	}
	if a.Parameters == nil {
		a.Parameters = []KeyValue{}
	}
	if a.Version == "" {
		a.Version = "0.0.1"
		if p.Version != nil && validVersion(*p.Version) {
			a.Version = *p.Version
		}
	} else {
		a.Version = nextVersion(a.Version)
	}
	return nil
}

func validVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			return false
		}
	}
	return true
}

// nextVersion is v with its patch number increased (OpenWhisk's update rule).
func nextVersion(v string) string {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return "0.0.1"
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil {
		return "0.0.1"
	}
	return fmt.Sprintf("%s.%s.%d", parts[0], parts[1], n+1)
}
