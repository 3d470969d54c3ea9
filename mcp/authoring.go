package mcp

// authoringTools builds the authoring family. (Filled in once
// bundle/authoring lands.)
func (s *Server) authoringTools() ([]*tool, error) { return nil, nil }

// familyError maps the coded errors of the families' packages onto the
// envelope; nil when err is none of them.
func familyError(err error) *ToolError {
	_ = err
	return nil
}
