// The server process on Windows (proxy/child_process.hpp): CreateProcessW into a Job Object.
//
// The child is created suspended, put into a job that kills every member when its last handle
// closes (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), then resumed: whatever it starts is born in the
// job, and nothing of it outlives ctxguard, even when ctxguard itself is killed. Only its two
// pipe ends and ctxguard's stderr are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST).
#include <windows.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "proxy/child_process.hpp"
#include "proxy/win32_handles.hpp"
#include "proxy/windows_command.hpp"
#include "support/utf16.hpp"

namespace ctxguard::proxy {

using win32::UniqueHandle;

struct ChildProcess::Native {
  UniqueHandle process;
  UniqueHandle job;
  UniqueHandle stdin_pipe;  // our overlapped ends
  UniqueHandle stdout_pipe;
  DWORD id = 0;
  std::optional<ExitStatus> exit;
};

namespace {

// The exit code of a tree ctxguard ends (TerminateJobObject): what a console shows for Ctrl+C.
constexpr UINT kKilledExitCode = 0xC000013A;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

bool is_file(const std::string& path) {
  const DWORD attributes = ::GetFileAttributesW(platform::widen(path).c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

std::string cmd_exe() {
  std::string comspec = environment("ComSpec");
  if (!comspec.empty()) return comspec;
  std::array<wchar_t, MAX_PATH> system{};
  const UINT length = ::GetSystemDirectoryW(system.data(), static_cast<UINT>(system.size()));
  return platform::narrow(std::wstring_view(system.data(), length)) + "\\cmd.exe";
}

// The command line for argv, and the program CreateProcessW runs.
Result<std::pair<std::string, std::string>> command_for(const std::vector<std::string>& argv) {
  const auto program =
      windows::find_command(argv[0], environment("PATH"), environment("PATHEXT"), is_file);
  if (!program) return std::make_error_code(std::errc::no_such_file_or_directory);
  const std::vector<std::string> arguments(argv.begin() + 1, argv.end());
  if (!windows::is_batch_file(*program)) {
    return std::pair{*program, windows::executable_command_line(*program, arguments)};
  }
  const std::string shell = cmd_exe();
  auto line = windows::batch_command_line(shell, *program, arguments);
  if (!line) return line.error();
  return std::pair{shell, std::move(*line)};
}

// ctxguard's stderr as an inheritable handle for the child; the null device when there is none.
UniqueHandle inheritable_stderr() {
  const HANDLE ours = ::GetStdHandle(STD_ERROR_HANDLE);
  HANDLE copy = nullptr;
  if (ours != nullptr && ours != INVALID_HANDLE_VALUE &&
      ::DuplicateHandle(::GetCurrentProcess(), ours, ::GetCurrentProcess(), &copy, 0, TRUE,
                        DUPLICATE_SAME_ACCESS)) {
    return UniqueHandle(copy);
  }
  SECURITY_ATTRIBUTES attributes{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  return UniqueHandle(::CreateFileW(L"NUL", GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
                                    &attributes, OPEN_EXISTING, 0, nullptr));
}

Result<UniqueHandle> kill_on_close_job() {
  UniqueHandle job(::CreateJobObjectW(nullptr, nullptr));
  if (!job) return win32::last_error();
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!::SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits,
                                 sizeof limits)) {
    return win32::last_error();
  }
  return job;
}

// The attribute list naming the only handles the child inherits.
class InheritedHandles {
 public:
  explicit InheritedHandles(std::array<HANDLE, 3> handles) : handles_(handles) {
    SIZE_T size = 0;
    ::InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
    storage_.resize(size);
    list_ = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage_.data());
    ready_ =
        ::InitializeProcThreadAttributeList(list_, 1, 0, &size) &&
        ::UpdateProcThreadAttribute(list_, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, handles_.data(),
                                    sizeof(HANDLE) * handles_.size(), nullptr, nullptr);
  }
  ~InheritedHandles() {
    if (list_ != nullptr) ::DeleteProcThreadAttributeList(list_);
  }
  InheritedHandles(const InheritedHandles&) = delete;
  InheritedHandles& operator=(const InheritedHandles&) = delete;

  bool ready() const { return ready_; }
  LPPROC_THREAD_ATTRIBUTE_LIST list() const { return list_; }

 private:
  std::array<HANDLE, 3> handles_;
  std::vector<unsigned char> storage_;
  LPPROC_THREAD_ATTRIBUTE_LIST list_ = nullptr;
  bool ready_ = false;
};

}  // namespace

std::string_view to_string(StopLevel level) {
  switch (level) {
    case StopLevel::kInterrupt:
      return "an interrupt (left to the console)";
    case StopLevel::kTerminate:
      return "TerminateJobObject";
    case StopLevel::kKill:
      break;
  }
  return "TerminateJobObject";
}

// Windows processes have no signals; `signal` is only ever set by the session's tests.
std::string ExitStatus::describe() const {
  if (signal) return "killed by signal " + std::to_string(*signal);
  return "exited with status " + std::to_string(static_cast<unsigned>(code));
}

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::make_error_code(std::errc::invalid_argument);
  auto command = command_for(argv);
  if (!command) return command.error();

  auto to_child = win32::make_pipe(win32::Flow::kOverlappedWrites, win32::PlainEnd::kForChild);
  if (!to_child) return to_child.error();
  auto from_child = win32::make_pipe(win32::Flow::kOverlappedReads, win32::PlainEnd::kForChild);
  if (!from_child) return from_child.error();
  UniqueHandle child_stderr = inheritable_stderr();
  auto job = kill_on_close_job();
  if (!job) return job.error();

  InheritedHandles inherited({to_child->plain.get(), from_child->plain.get(), child_stderr.get()});
  if (!inherited.ready()) return win32::last_error();
  STARTUPINFOEXW startup{};
  startup.StartupInfo.cb = sizeof startup;
  startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  startup.StartupInfo.hStdInput = to_child->plain.get();
  startup.StartupInfo.hStdOutput = from_child->plain.get();
  startup.StartupInfo.hStdError = child_stderr.get();
  startup.lpAttributeList = inherited.list();

  // Without a console of our own (Claude Desktop starts us without one), a console server would
  // otherwise open a window.
  DWORD flags = CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
  if (::GetConsoleWindow() == nullptr) flags |= CREATE_NO_WINDOW;
  std::wstring application = platform::widen(command->first);
  std::wstring line = platform::widen(command->second);
  PROCESS_INFORMATION created{};
  if (!::CreateProcessW(application.c_str(), line.data(), nullptr, nullptr, TRUE, flags, nullptr,
                        nullptr, &startup.StartupInfo, &created)) {
    return win32::last_error();
  }
  UniqueHandle process(created.hProcess);
  UniqueHandle thread(created.hThread);
  if (!::AssignProcessToJobObject(job->get(), process.get())) {
    const std::error_code error = win32::last_error();
    ::TerminateProcess(process.get(), kKilledExitCode);
    return error;
  }
  ::ResumeThread(thread.get());

  auto native = std::make_unique<Native>();
  native->process = std::move(process);
  native->job = std::move(*job);
  native->stdin_pipe = std::move(to_child->overlapped);
  native->stdout_pipe = std::move(from_child->overlapped);
  native->id = created.dwProcessId;
  return ChildProcess(std::move(native));
}

ChildProcess::ChildProcess(std::unique_ptr<Native> native) : native_(std::move(native)) {}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept = default;

// Closing the job's last handle kills what is left of the tree.
ChildProcess::~ChildProcess() {
  if (native_ && native_->job) ::TerminateJobObject(native_->job.get(), kKilledExitCode);
}

ProcessId ChildProcess::pid() const { return native_->id; }

ByteStream ChildProcess::take_stdin(const boost::asio::any_io_executor& executor) {
  return ByteStream(executor, native_->stdin_pipe.release());
}

ByteStream ChildProcess::take_stdout(const boost::asio::any_io_executor& executor) {
  return ByteStream(executor, native_->stdout_pipe.release());
}

void ChildProcess::stop(StopLevel level) {
  if (level == StopLevel::kInterrupt || !native_->job) return;
  ::TerminateJobObject(native_->job.get(), kKilledExitCode);
}

bool ChildProcess::group_alive() const {
  JOBOBJECT_BASIC_ACCOUNTING_INFORMATION accounting{};
  if (!::QueryInformationJobObject(native_->job.get(), JobObjectBasicAccountingInformation,
                                   &accounting, sizeof accounting, nullptr)) {
    return false;
  }
  return accounting.ActiveProcesses > 0;
}

std::optional<ExitStatus> ChildProcess::try_wait() {
  Native& child = *native_;
  if (child.exit || ::WaitForSingleObject(child.process.get(), 0) != WAIT_OBJECT_0) {
    return child.exit;
  }
  DWORD code = 0;
  ::GetExitCodeProcess(child.process.get(), &code);
  child.exit = ExitStatus{static_cast<int>(code), std::nullopt};
  return child.exit;
}

const std::optional<ExitStatus>& ChildProcess::exit_status() const { return native_->exit; }

ExitStatus ChildProcess::wait() {
  ::WaitForSingleObject(native_->process.get(), INFINITE);
  return try_wait().value_or(ExitStatus{});
}

HANDLE win32::process_handle(ChildProcess& child) { return child.native().process.get(); }

void ensure_standard_descriptors() {
  for (const DWORD which : {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE}) {
    const HANDLE handle = ::GetStdHandle(which);
    if (handle != nullptr && handle != INVALID_HANDLE_VALUE) continue;
    const DWORD access = which == STD_INPUT_HANDLE ? GENERIC_READ : GENERIC_WRITE;
    const HANDLE null = ::CreateFileW(L"NUL", access, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                                      OPEN_EXISTING, 0, nullptr);
    if (null != INVALID_HANDLE_VALUE) ::SetStdHandle(which, null);
  }
}

void become_subreaper() {}

void ignore_sigpipe() {}

}  // namespace ctxguard::proxy
