package aws

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// The XML namespaces of the query-protocol services.
const (
	ec2NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
	iamNS = "https://iam.amazonaws.com/doc/2010-05-08/"
	stsNS = "https://sts.amazonaws.com/doc/2011-06-15/"
)

// params are the parameters of a query-protocol request (Action=...&VpcId.1=...).
type params url.Values

func (p params) get(k string) string { return url.Values(p).Get(k) }

// required returns parameter k or a MissingParameter error naming it.
func (p params) required(k string) (string, error) {
	v := p.get(k)
	if v == "" {
		return "", errf(400, "MissingParameter", "The request must contain the parameter %s", k)
	}
	return v, nil
}

// list returns the values of a flattened list: prefix.1, prefix.2, ... (in index order).
func (p params) list(prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := p[prefix+"."+strconv.Itoa(i)]
		if !ok {
			// Some clients skip numbers; collect the rest in index order.
			var idx []int
			for k := range p {
				if rest, ok := strings.CutPrefix(k, prefix+"."); ok && !strings.Contains(rest, ".") {
					if n, err := strconv.Atoi(rest); err == nil && n >= i {
						idx = append(idx, n)
					}
				}
			}
			sort.Ints(idx)
			for _, n := range idx {
				out = append(out, p.get(prefix+"."+strconv.Itoa(n)))
			}
			return out
		}
		out = append(out, v[0])
	}
}

// structs returns the members of a list of structures: prefix.N.field, as one params each.
func (p params) structs(prefix string) []params {
	byIndex := map[int]params{}
	for k, v := range p {
		rest, ok := strings.CutPrefix(k, prefix+".")
		if !ok {
			continue
		}
		num, field, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		if byIndex[n] == nil {
			byIndex[n] = params{}
		}
		byIndex[n][field] = v
	}
	idx := make([]int, 0, len(byIndex))
	for n := range byIndex {
		idx = append(idx, n)
	}
	sort.Ints(idx)
	out := make([]params, len(idx))
	for i, n := range idx {
		out[i] = byIndex[n]
	}
	return out
}

// filters returns EC2's Filter.N.Name / Filter.N.Value.M as name -> values.
func (p params) filters() map[string][]string {
	out := map[string][]string{}
	for _, f := range p.structs("Filter") {
		name := f.get("Name")
		out[name] = append(out[name], f.list("Value")...)
	}
	return out
}

// boolean reads a boolean parameter ("true"/"false"); absent is def.
func (p params) boolean(k string, def bool) bool {
	switch p.get(k) {
	case "true":
		return true
	case "false":
		return false
	}
	return def
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ec2Meta is embedded first in every EC2 response: the request id.
type ec2Meta struct {
	RequestID string `xml:"requestId"`
}

func (m *ec2Meta) setRequestID(id string) { m.RequestID = id }

// ec2Return is the answer of EC2 actions that only say they worked.
type ec2Return struct {
	ec2Meta
	Return bool `xml:"return"`
}

// writeEC2Result writes <ActionResponse xmlns=...><requestId/>...fields of out...</ActionResponse>.
func writeEC2Result(w http.ResponseWriter, reqID, action string, out any) {
	if m, ok := out.(interface{ setRequestID(string) }); ok {
		m.setRequestID(reqID)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	start := xml.StartElement{Name: xml.Name{Local: action + "Response"}, Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: ec2NS}}}
	if err := xml.NewEncoder(&b).EncodeElement(out, start); err != nil {
		writeEC2Error(w, reqID, errf(500, "InternalError", "encode %s: %v", action, err))
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("X-Amzn-RequestId", reqID)
	_, _ = w.Write(b.Bytes())
}

// writeQueryResult writes IAM's and STS's envelope: <ActionResponse><ActionResult>out</ActionResult>
// <ResponseMetadata><RequestId/></ResponseMetadata></ActionResponse>; out nil gives no result.
func writeQueryResult(w http.ResponseWriter, reqID, ns, action string, out any) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString("<" + action + `Response xmlns="` + ns + `">`)
	if out != nil {
		if err := xml.NewEncoder(&b).EncodeElement(out, xml.StartElement{Name: xml.Name{Local: action + "Result"}}); err != nil {
			writeQueryError(w, reqID, ns, errf(500, "ServiceFailure", "encode %s: %v", action, err))
			return
		}
	}
	b.WriteString("<ResponseMetadata><RequestId>" + reqID + "</RequestId></ResponseMetadata>")
	b.WriteString("</" + action + "Response>")
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("X-Amzn-RequestId", reqID)
	_, _ = w.Write(b.Bytes())
}

// writeQueryJSON is the JSON form STS answers when asked with Accept: application/json (what
// aws-iam-authenticator's server does with the presigned URL of a token).
func writeQueryJSON(w http.ResponseWriter, reqID, action string, out any) {
	doc := map[string]any{action + "Response": map[string]any{
		action + "Result":  out,
		"ResponseMetadata": map[string]string{"RequestId": reqID},
	}}
	b, _ := json.Marshal(doc)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", reqID)
	_, _ = w.Write(b)
}
