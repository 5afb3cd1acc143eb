package approval

// Waiter says who will take up the decision on a pending approval, as an
// inbox knows it: a console shows a person whether deciding now answers a
// caller that waits, or runs the call for nobody in particular.
type Waiter string

// The waiters.
const (
	// WaiterHere: the call's caller waits in this process and gets the
	// result as soon as the decision is made.
	WaiterHere Waiter = "here"
	// WaiterNone: the caller left (or the approval outlived the process
	// that asked); once decided, Resume runs the call, or records its
	// refusal, under its call ID, and nobody gets the result but the
	// record.
	WaiterNone Waiter = "none"
	// WaiterElsewhere: no caller waits in this process, and none is known
	// to have left: the call was asked of another process sharing the
	// store (another server, a command line), whose caller may wait there.
	WaiterElsewhere Waiter = "elsewhere"
)

// Waiter reports who will take up the decision on approval id (see
// [Waiter]). It answers from this process's knowledge only, without asking
// the store: an approval unknown here is WaiterElsewhere.
func (in *Inbox) Waiter(id string) Waiter {
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, ok := in.waiters[id]; ok {
		return WaiterHere
	}
	if _, ok := in.orphans[id]; ok {
		return WaiterNone
	}
	return WaiterElsewhere
}
