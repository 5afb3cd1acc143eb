package limit

// waiter is a request parked in a Controller's queue. Fields other than ready
// are guarded by the Controller's mutex; permit is written before ready is
// closed, so the waiting goroutine may read it after <-ready without the lock.
type waiter struct {
	bucket   *bucketState // nil for a category without a configured Bucket
	name     string
	weight   int
	priority int

	prev, next *waiter

	ready   chan struct{} // closed when granted
	granted bool
	permit  Permit
}

// waitList is an intrusive doubly linked list of waiters in service order, so
// that a canceled waiter leaves in O(1) and dispatch walks it front to back.
type waitList struct {
	head, tail *waiter
	len        int
}

// pushBack appends w: arrival order.
func (l *waitList) pushBack(w *waiter) {
	w.prev, w.next = l.tail, nil
	if l.tail == nil {
		l.head = w
	} else {
		l.tail.next = w
	}
	l.tail = w
	l.len++
}

// insertByPriority puts w after every waiter of the same or higher priority.
// It searches from the back because most waiters share a priority, which makes
// the common case O(1).
func (l *waitList) insertByPriority(w *waiter) {
	at := l.tail
	for at != nil && at.priority < w.priority {
		at = at.prev
	}
	if at == l.tail {
		l.pushBack(w)
		return
	}
	// w goes after at (or first when at is nil).
	var next *waiter
	if at == nil {
		next = l.head
		l.head = w
	} else {
		next = at.next
		at.next = w
	}
	w.prev, w.next = at, next
	next.prev = w
	l.len++
}

// remove unlinks w, which must be in l.
func (l *waitList) remove(w *waiter) {
	if w.prev == nil {
		l.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		l.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
	l.len--
}
