package promtext

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	procGetProcessMemoryInfo  = syscall.NewLazyDLL("psapi.dll").NewProc("GetProcessMemoryInfo")
	procGetProcessHandleCount = syscall.NewLazyDLL("kernel32.dll").NewProc("GetProcessHandleCount")
)

// processMemoryCounters is PROCESS_MEMORY_COUNTERS_EX.
type processMemoryCounters struct {
	cb                         uint32
	PageFaultCount             uint32
	PeakWorkingSetSize         uintptr
	WorkingSetSize             uintptr
	QuotaPeakPagedPoolUsage    uintptr
	QuotaPagedPoolUsage        uintptr
	QuotaPeakNonPagedPoolUsage uintptr
	QuotaNonPagedPoolUsage     uintptr
	PagefileUsage              uintptr
	PeakPagefileUsage          uintptr
	PrivateUsage               uintptr
}

// processFamilies reads the figures from GetProcessTimes,
// GetProcessMemoryInfo (the virtual size is the private bytes, the
// resident the working set) and GetProcessHandleCount; the most handles
// is Windows' fixed limit, 16M.
func processFamilies(add func(name string, v float64)) {
	h := windows.CurrentProcess()
	var start, exit, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &start, &exit, &kernel, &user) == nil {
		add("process_start_time_seconds", float64(start.Nanoseconds()/1e9))
		add("process_cpu_seconds_total", fileTimeSeconds(kernel)+fileTimeSeconds(user))
	}
	var mem processMemoryCounters
	if r, _, _ := procGetProcessMemoryInfo.Call(uintptr(h), uintptr(unsafe.Pointer(&mem)), unsafe.Sizeof(mem)); r == 1 {
		add("process_virtual_memory_bytes", float64(mem.PrivateUsage))
		add("process_resident_memory_bytes", float64(mem.WorkingSetSize))
	}
	var handles uint32
	if r, _, _ := procGetProcessHandleCount.Call(uintptr(h), uintptr(unsafe.Pointer(&handles))); r == 1 {
		add("process_open_fds", float64(handles))
	}
	add("process_max_fds", 16*1024*1024)
}

func fileTimeSeconds(ft windows.Filetime) float64 {
	return float64(uint64(ft.HighDateTime)<<32+uint64(ft.LowDateTime)) / 1e7
}
