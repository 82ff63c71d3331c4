package worker

// EarlyCancels returns how many cancels the worker remembers for calls
// that have not reached it.
func (w *Worker) EarlyCancels() int {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	return len(w.cancelled)
}
