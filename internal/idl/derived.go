package idl

// The messages rosidl derives from services and actions: the service
// event of Iron and later, and the wrappers an action's services and
// feedback topic carry.

// MsgType is the type of a field holding message pkg/Name.
func MsgType(pkg, name string) Type {
	return Type{Kind: Message, Package: pkg, Name: name}
}

// ServiceEvent builds Name_Event, the message Iron and later publish on
// a service's introspection topic.
func ServiceEvent(sv *Srv) *Msg {
	e := Event(sv.Request, sv.Response)
	e.File = sv.File
	e.Comment = "The service event of " + sv.FullName() + " (service introspection)."
	return e
}

// Event builds the service event message of the service whose request and
// response are req and resp (named Name_Request and Name_Response): Name_Event
// in their package and namespace, with the fields info
// (service_msgs/ServiceEventInfo), request and response (each a sequence
// of at most one). The services of an action have one too
// (Name_SendGoal_Event), though nros-go does not generate it.
func Event(req, resp *Msg) *Msg {
	r, s := MsgType(req.Package, req.Name), MsgType(resp.Package, resp.Name)
	r.Array, r.Size = Bounded, 1
	s.Array, s.Size = Bounded, 1
	name := req.Name[:len(req.Name)-len("_Request")]
	return &Msg{Package: req.Package, Namespace: req.Namespace, Name: name + "_Event", File: req.File,
		Fields: []Field{
			{Name: "info", Type: MsgType("service_msgs", "ServiceEventInfo")},
			{Name: "request", Type: r},
			{Name: "response", Type: s},
		}}
}

// ActionMsgs returns the messages of an action: Goal, Result, Feedback, and
// the wrappers of its send_goal and get_result services
// (Name_SendGoal_Request, _Response, Name_GetResult_Request, _Response) and
// of its feedback topic (Name_FeedbackMessage), in that order.
func ActionMsgs(a *Action) []*Msg {
	uuid := Field{Name: "goal_id", Type: MsgType("unique_identifier_msgs", "UUID")}
	mk := func(name string, fields ...Field) *Msg {
		return &Msg{Package: a.Package, Namespace: "action", Name: a.Name + name, File: a.File, Fields: fields}
	}
	return []*Msg{
		a.Goal, a.Result, a.Feedback,
		mk("_SendGoal_Request", uuid,
			Field{Name: "goal", Type: MsgType(a.Package, a.Name+"_Goal")}),
		mk("_SendGoal_Response",
			Field{Name: "accepted", Type: Type{Kind: Bool}},
			Field{Name: "stamp", Type: MsgType("builtin_interfaces", "Time")}),
		mk("_GetResult_Request", uuid),
		mk("_GetResult_Response",
			Field{Name: "status", Type: Type{Kind: Int8}},
			Field{Name: "result", Type: MsgType(a.Package, a.Name+"_Result")}),
		mk("_FeedbackMessage", uuid,
			Field{Name: "feedback", Type: MsgType(a.Package, a.Name+"_Feedback")}),
	}
}
