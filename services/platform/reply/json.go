package reply

import "encoding/json"

// The reply's JSON is one flat object: the typed keys beside the tool's own
// (Fields), which never override them.

// MarshalJSON writes the reply as its client reads it.
func (r Reply) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(r.Fields)+6)
	for k, v := range r.Fields {
		m[k] = v
	}
	m["status"] = r.Status
	if r.ContentType != "" || r.Content != "" {
		m["content"] = r.Content
	}
	put(m, "content_type", r.ContentType)
	put(m, "error", r.Error)
	if r.StepNumber != nil {
		m["step_number"] = *r.StepNumber
	}
	put(m, "continuation_id", r.ContinuationID)
	if r.ContinuationOffer != nil {
		m["continuation_offer"] = r.ContinuationOffer
	}
	m["metadata"] = r.Metadata
	return json.Marshal(m)
}

// UnmarshalJSON reads a reply, the keys it does not type into Fields.
func (r *Reply) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*r = Reply{}
	err := take(raw, map[string]any{
		"status": &r.Status, "content": &r.Content, "content_type": &r.ContentType, "error": &r.Error,
		"step_number": &r.StepNumber, "continuation_id": &r.ContinuationID,
		"continuation_offer": &r.ContinuationOffer, "metadata": &r.Metadata,
	})
	if err != nil {
		return err
	}
	r.Fields, err = rest(raw)
	return err
}

// MarshalJSON writes the metadata object.
func (m Metadata) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(m.Fields)+7)
	for k, v := range m.Fields {
		out[k] = v
	}
	put(out, "tool_name", m.ToolName)
	put(out, "trace_id", m.TraceID)
	put(out, "continuation_error", m.ContinuationError)
	put(out, "generated_code_file", m.GeneratedCodeFile)
	put(out, "model_used", m.ModelUsed)
	put(out, "provider_used", m.ProviderUsed)
	put(out, "requested_model", m.RequestedModel)
	if m.OutputTruncated {
		out["output_truncated"] = true
		out["full_content_chars"] = m.FullContentChars
	}
	if m.FilesOmitted != nil {
		out["files_omitted"] = m.FilesOmitted
	}
	if len(m.FilesSkipped) > 0 {
		out["files_skipped"] = m.FilesSkipped
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the metadata object.
func (m *Metadata) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*m = Metadata{}
	err := take(raw, map[string]any{
		"tool_name": &m.ToolName, "trace_id": &m.TraceID, "continuation_error": &m.ContinuationError,
		"generated_code_file": &m.GeneratedCodeFile, "output_truncated": &m.OutputTruncated,
		"full_content_chars": &m.FullContentChars, "files_omitted": &m.FilesOmitted,
		"files_skipped": &m.FilesSkipped, "model_used": &m.ModelUsed, "provider_used": &m.ProviderUsed,
		"requested_model": &m.RequestedModel,
	})
	if err != nil {
		return err
	}
	m.Fields, err = rest(raw)
	return err
}

func put(m map[string]any, key, value string) {
	if value != "" {
		m[key] = value
	}
}

// take decodes the typed keys into their fields and removes them from raw.
func take(raw map[string]json.RawMessage, fields map[string]any) error {
	for key, dst := range fields {
		if v, ok := raw[key]; ok {
			delete(raw, key)
			if err := json.Unmarshal(v, dst); err != nil {
				return err
			}
		}
	}
	return nil
}

// rest decodes what take left: the tool's own keys.
func rest(raw map[string]json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return nil, err
		}
		out[k] = x
	}
	return out, nil
}
