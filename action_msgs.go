package nros

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg/builtin_interfaces"
)

// GoalID identifies one goal of an action: the 16 bytes of the UUID the
// client chose (unique_identifier_msgs/msg/UUID on the wire).
type GoalID [16]byte

// NewGoalID returns a random (version 4) UUID.
func NewGoalID() GoalID {
	var id GoalID
	_, _ = rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// IsZero reports whether every byte is zero (a cancel request's "any goal").
func (id GoalID) IsZero() bool { return id == GoalID{} }

// String formats the UUID as 8-4-4-4-12 hexadecimal digits.
func (id GoalID) String() string {
	h := hex.EncodeToString(id[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// GoalStatus is a goal's state as action_msgs/msg/GoalStatus numbers it.
type GoalStatus int8

// The goal states of action_msgs/msg/GoalStatus.
const (
	GoalStatusUnknown   GoalStatus = 0 // not known (never accepted, or expired)
	GoalStatusAccepted  GoalStatus = 1 // accepted, not executing yet
	GoalStatusExecuting GoalStatus = 2
	GoalStatusCanceling GoalStatus = 3 // a cancel was accepted; the goal has not stopped yet
	GoalStatusSucceeded GoalStatus = 4 // terminal
	GoalStatusCanceled  GoalStatus = 5 // terminal
	GoalStatusAborted   GoalStatus = 6 // terminal
)

// Terminal reports whether the goal has ended (succeeded, canceled or
// aborted): its result is final.
func (s GoalStatus) Terminal() bool {
	return s == GoalStatusSucceeded || s == GoalStatusCanceled || s == GoalStatusAborted
}

// String returns the constant's name in action_msgs ("SUCCEEDED").
func (s GoalStatus) String() string {
	switch s {
	case GoalStatusUnknown:
		return "UNKNOWN"
	case GoalStatusAccepted:
		return "ACCEPTED"
	case GoalStatusExecuting:
		return "EXECUTING"
	case GoalStatusCanceling:
		return "CANCELING"
	case GoalStatusSucceeded:
		return "SUCCEEDED"
	case GoalStatusCanceled:
		return "CANCELED"
	case GoalStatusAborted:
		return "ABORTED"
	}
	return fmt.Sprintf("GoalStatus(%d)", int8(s))
}

// actionTypes checks that Goal, Result and Feedback are the three parts of
// one action (…/action/X_Goal, X_Result, X_Feedback) and returns the
// action's type prefix ("test_msgs/action/Fibonacci").
func actionTypes(goal, result, feedback string) (string, error) {
	prefix, ok := strings.CutSuffix(goal, "_Goal")
	if !ok || !strings.Contains(prefix, "/action/") {
		return "", fmt.Errorf("nros: %s is not an action goal type (pkg/action/Name_Goal)", goal)
	}
	if result != prefix+"_Result" || feedback != prefix+"_Feedback" {
		return "", fmt.Errorf("nros: %s, %s and %s are not the goal, result and feedback of one action", goal, result, feedback)
	}
	return prefix, nil
}

// The service and message wrappers of an action (X_SendGoal_Request, …),
// built around the user's generated Goal, Result and Feedback types so that
// any generated action works without its wrapper types. Each encodes the
// wrapped part in the same CDR stream, as the generated wrapper does, and
// announces the type hashes of the generated wrapper of its name when that
// is registered (msg.Register).

type sendGoalRequest[G any, PG MessagePtr[G]] struct {
	ID   GoalID
	Goal G
}

func (m *sendGoalRequest[G, PG]) TypeName() string {
	return strings.TrimSuffix(PG(&m.Goal).TypeName(), "_Goal") + "_SendGoal_Request"
}

func (m *sendGoalRequest[G, PG]) TypeHash() string { return registeredTypeHash(m.TypeName()) }

func (m *sendGoalRequest[G, PG]) ServiceTypeHash() string {
	return registeredServiceTypeHash(m.TypeName())
}

func (m *sendGoalRequest[G, PG]) MarshalCDR(e *cdr.Encoder) {
	e.WriteOctetArray(m.ID[:])
	PG(&m.Goal).MarshalCDR(e)
}

func (m *sendGoalRequest[G, PG]) UnmarshalCDR(d *cdr.Decoder) error {
	d.ReadOctetArray(m.ID[:])
	if err := d.Err(); err != nil {
		return err
	}
	return PG(&m.Goal).UnmarshalCDR(d)
}

type sendGoalResponse[G any, PG MessagePtr[G]] struct {
	Accepted bool
	Stamp    builtin_interfaces.Time
}

func (m *sendGoalResponse[G, PG]) TypeName() string {
	return strings.TrimSuffix(PG(new(G)).TypeName(), "_Goal") + "_SendGoal_Response"
}

func (m *sendGoalResponse[G, PG]) TypeHash() string { return registeredTypeHash(m.TypeName()) }

func (m *sendGoalResponse[G, PG]) ServiceTypeHash() string {
	return registeredServiceTypeHash(m.TypeName())
}

func (m *sendGoalResponse[G, PG]) MarshalCDR(e *cdr.Encoder) {
	e.WriteBool(m.Accepted)
	m.Stamp.MarshalCDR(e)
}

func (m *sendGoalResponse[G, PG]) UnmarshalCDR(d *cdr.Decoder) error {
	m.Accepted = d.ReadBool()
	return m.Stamp.UnmarshalCDR(d)
}

type getResultRequest[R any, PR MessagePtr[R]] struct {
	ID GoalID
}

func (m *getResultRequest[R, PR]) TypeName() string {
	return strings.TrimSuffix(PR(new(R)).TypeName(), "_Result") + "_GetResult_Request"
}

func (m *getResultRequest[R, PR]) TypeHash() string { return registeredTypeHash(m.TypeName()) }

func (m *getResultRequest[R, PR]) ServiceTypeHash() string {
	return registeredServiceTypeHash(m.TypeName())
}

func (m *getResultRequest[R, PR]) MarshalCDR(e *cdr.Encoder) { e.WriteOctetArray(m.ID[:]) }

func (m *getResultRequest[R, PR]) UnmarshalCDR(d *cdr.Decoder) error {
	d.ReadOctetArray(m.ID[:])
	return d.Err()
}

type getResultResponse[R any, PR MessagePtr[R]] struct {
	Status GoalStatus
	Result R
}

func (m *getResultResponse[R, PR]) TypeName() string {
	return strings.TrimSuffix(PR(&m.Result).TypeName(), "_Result") + "_GetResult_Response"
}

func (m *getResultResponse[R, PR]) TypeHash() string { return registeredTypeHash(m.TypeName()) }

func (m *getResultResponse[R, PR]) ServiceTypeHash() string {
	return registeredServiceTypeHash(m.TypeName())
}

func (m *getResultResponse[R, PR]) MarshalCDR(e *cdr.Encoder) {
	e.WriteInt8(int8(m.Status))
	PR(&m.Result).MarshalCDR(e)
}

func (m *getResultResponse[R, PR]) UnmarshalCDR(d *cdr.Decoder) error {
	m.Status = GoalStatus(d.ReadInt8())
	if err := d.Err(); err != nil {
		return err
	}
	return PR(&m.Result).UnmarshalCDR(d)
}

type feedbackMessage[F any, PF MessagePtr[F]] struct {
	ID       GoalID
	Feedback F
}

func (m *feedbackMessage[F, PF]) TypeName() string {
	return PF(&m.Feedback).TypeName() + "Message"
}

func (m *feedbackMessage[F, PF]) TypeHash() string { return registeredTypeHash(m.TypeName()) }

func (m *feedbackMessage[F, PF]) MarshalCDR(e *cdr.Encoder) {
	e.WriteOctetArray(m.ID[:])
	PF(&m.Feedback).MarshalCDR(e)
}

func (m *feedbackMessage[F, PF]) UnmarshalCDR(d *cdr.Decoder) error {
	d.ReadOctetArray(m.ID[:])
	if err := d.Err(); err != nil {
		return err
	}
	return PF(&m.Feedback).UnmarshalCDR(d)
}

// firstClose sets *closed under mu and reports whether this call did it.
func firstClose(mu *sync.Mutex, closed *bool) bool {
	mu.Lock()
	defer mu.Unlock()
	first := !*closed
	*closed = true
	return first
}

func stampOf(t Time) builtin_interfaces.Time {
	sec, nsec, err := t.SecNanosec()
	if err != nil {
		return builtin_interfaces.Time{}
	}
	return builtin_interfaces.Time{Sec: sec, Nanosec: nsec}
}

func timeOf(s builtin_interfaces.Time) Time { return NewTime(s.Sec, s.Nanosec) }
