package promtext

// Process is the collector of the process's families, as client_golang's
// collectors.NewProcessCollector writes them for the running process:
// process_cpu_seconds_total, process_open_fds, process_max_fds,
// process_virtual_memory_bytes, process_virtual_memory_max_bytes,
// process_resident_memory_bytes, process_start_time_seconds and, on
// Linux, process_network_receive_bytes_total and
// process_network_transmit_bytes_total. A figure the system does not give
// is left out (on macOS without cgo the memory sizes; on systems other than
// Linux, macOS and Windows all of them).
func Process() Collector {
	return func(add func(Family)) {
		processFamilies(func(name string, v float64) {
			p := processHelp[name]
			add(Family{Name: name, Help: p.help, Type: p.typ, Series: []Series{{Value: v}}})
		})
	}
}

var processHelp = map[string]struct{ help, typ string }{
	"process_cpu_seconds_total":            {"Total user and system CPU time spent in seconds.", CounterType},
	"process_open_fds":                     {"Number of open file descriptors.", GaugeType},
	"process_max_fds":                      {"Maximum number of open file descriptors.", GaugeType},
	"process_virtual_memory_bytes":         {"Virtual memory size in bytes.", GaugeType},
	"process_virtual_memory_max_bytes":     {"Maximum amount of virtual memory available in bytes.", GaugeType},
	"process_resident_memory_bytes":        {"Resident memory size in bytes.", GaugeType},
	"process_start_time_seconds":           {"Start time of the process since unix epoch in seconds.", GaugeType},
	"process_network_receive_bytes_total":  {"Number of bytes received by the process over the network.", CounterType},
	"process_network_transmit_bytes_total": {"Number of bytes sent by the process over the network.", CounterType},
}
