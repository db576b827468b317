package aws

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
)

// apiError is an error answered to a client in the shape of its service's protocol.
type apiError struct {
	Status int
	Code   string
	Msg    string
	// Extra are the restJson1 members EKS sends besides the message (clusterName, nodegroupName, addonName).
	Extra map[string]string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Msg }

func errf(status int, code, format string, a ...any) *apiError {
	return &apiError{Status: status, Code: code, Msg: fmt.Sprintf(format, a...)}
}

// with adds a restJson1 member to the error.
func (e *apiError) with(k, v string) *apiError {
	if v == "" {
		return e
	}
	if e.Extra == nil {
		e.Extra = map[string]string{}
	}
	e.Extra[k] = v
	return e
}

// writeJSONError answers e the restJson1 way: the code in X-Amzn-ErrorType, the message and the
// extra members in the body.
func writeJSONError(w http.ResponseWriter, reqID string, e *apiError) {
	body := map[string]string{"message": e.Msg}
	for k, v := range e.Extra {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-ErrorType", e.Code)
	h.Set("X-Amzn-RequestId", reqID)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}

// writeQueryError answers e the way IAM and STS do (awsQuery): an ErrorResponse document.
func writeQueryError(w http.ResponseWriter, reqID, ns string, e *apiError) {
	typ := "Sender"
	if e.Status >= 500 {
		typ = "Receiver"
	}
	doc := struct {
		XMLName xml.Name `xml:"ErrorResponse"`
		Xmlns   string   `xml:"xmlns,attr"`
		Error   struct {
			Type    string `xml:"Type"`
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
		RequestID string `xml:"RequestId"`
	}{Xmlns: ns, RequestID: reqID}
	doc.Error.Type, doc.Error.Code, doc.Error.Message = typ, e.Code, e.Msg
	writeXML(w, e.Status, reqID, doc)
}

// writeQueryErrorJSON is the JSON form of an ErrorResponse (STS asked with Accept: application/json).
func writeQueryErrorJSON(w http.ResponseWriter, reqID string, e *apiError) {
	typ := "Sender"
	if e.Status >= 500 {
		typ = "Receiver"
	}
	b, _ := json.Marshal(map[string]any{"Error": map[string]string{"Type": typ, "Code": e.Code, "Message": e.Msg}, "RequestId": reqID})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", reqID)
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}

// writeEC2Error answers e the way EC2 does: a Response document with an Errors list.
func writeEC2Error(w http.ResponseWriter, reqID string, e *apiError) {
	type ec2Err struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	doc := struct {
		XMLName   xml.Name `xml:"Response"`
		Errors    []ec2Err `xml:"Errors>Error"`
		RequestID string   `xml:"RequestID"`
	}{Errors: []ec2Err{{e.Code, e.Msg}}, RequestID: reqID}
	writeXML(w, e.Status, reqID, doc)
}

func writeXML(w http.ResponseWriter, status int, reqID string, v any) {
	b, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, "nuv emulator: encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	b = append([]byte(xml.Header), b...)
	h := w.Header()
	h.Set("Content-Type", "text/xml")
	h.Set("X-Amzn-RequestId", reqID)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
