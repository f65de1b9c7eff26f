// rft_info: prints rft's version, every RFT_* setting (current value, default, allowed values,
// doc), the UCX transports, the verbs devices and the hardware topology; --json prints the same
// as one JSON object. Bad or unknown RFT_* variables are reported as warnings on stderr. Always
// exits 0 once the report is printed: a machine without RDMA is a fact to show, not a failure.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/status.h"
#include "base/version.h"
#include "tools/rft_info/json_writer.h"
#include "tools/rft_info/probe.h"

namespace rft::info {
namespace {

constexpr char kUsage[] =
    "usage: rft_info [--json]\n"
    "Prints rft's version, every RFT_* setting with its current value, default, allowed values\n"
    "and description, and the UCX transports, verbs devices and topology found on this host.\n"
    "  --json     one JSON object on one line instead of the human report\n"
    "  --version  the rft version only\n"
    "  --help     this text\n";

struct Report {
  std::vector<Status> problems;  // bad or unknown RFT_* variables
  UcxInfo ucx;
  VerbsInfo verbs;
  TopologyInfo topology;
};

std::string Plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// An empty value (RFT_NET_DEVICE's default) would print as nothing at all after "= ".
std::string Shown(const std::string& value) { return value.empty() ? "\"\"" : value; }

std::string LocalityText(const verbs::DeviceLocality& locality) {
  switch (locality.locality) {
    case verbs::Locality::kNear:
      return "near CPUs " + locality.near_cpus;
    case verbs::Locality::kPartial:
      return "near CPUs " + locality.near_cpus + " (some of the CPUs this process may run on)";
    case verbs::Locality::kFar:
      return "near CPUs " + locality.near_cpus + " (none of the CPUs this process may run on)";
    case verbs::Locality::kUnknown:
      break;
  }
  return "locality unknown (hwloc has no OS device for it, as for soft devices such as rxe)";
}

void PrintText(const Report& r) {
  std::printf("rft: version %s\n\n", RFT_VERSION_STRING);

  std::printf("Settings (environment variables; rft reads them at initialization):\n");
  for (const config::SettingInfo& s : config::AllSettings()) {
    std::string value = config::CurrentValueText(s.name);
    const char* origin = "";
    if (!config::IsSet(s.name)) {
      origin = " (default)";
    } else if (config::CheckSetting(s.name).ok()) {
      origin = " (set)";
    }
    std::printf("  %s = %s%s\n", s.name.c_str(), Shown(value).c_str(), origin);
    if (Status check = config::CheckSetting(s.name); !check.ok()) {
      std::printf("      invalid: %s\n", check.message().c_str());
    }
    std::printf("      %s\n", s.doc.c_str());
    std::printf("      %s; default %s; allowed %s\n", config::KindName(s.kind),
                Shown(s.default_text).c_str(), s.allowed.c_str());
  }
  std::printf("\n");

  std::printf("ucx: version %s\n", r.ucx.version.c_str());
  if (!r.ucx.error.empty()) std::printf("ucx: error: %s\n", r.ucx.error.c_str());
  if (r.ucx.transports.empty()) std::printf("ucx: none: no transport available\n");
  for (const UcxTransport& t : r.ucx.transports) {
    std::printf("ucx: transport %s/%s (%s)\n", t.transport.c_str(), t.device.c_str(),
                t.device_type.c_str());
  }

  if (!r.verbs.error.empty()) std::printf("verbs: error: %s\n", r.verbs.error.c_str());
  if (r.verbs.devices.empty()) std::printf("verbs: none: no RDMA device\n");
  for (const VerbsDevice& d : r.verbs.devices) {
    std::printf("verbs: device %s (%s, node GUID %s, %s)\n", d.name.c_str(), d.transport.c_str(),
                d.node_guid.c_str(),
                Plural(static_cast<int>(d.ports.size()), "port", "ports").c_str());
    std::printf("verbs: %s: %s\n", d.name.c_str(), LocalityText(d.locality).c_str());
    if (d.error.empty()) {
      std::printf("verbs: %s limits: %d QPs, %d receives per shared receive queue, %d CQ entries\n",
                  d.name.c_str(), d.max_qp, d.max_srq_wr, d.max_cqe);
    }
    for (const VerbsPort& p : d.ports) {
      std::printf("verbs: %s port %d: %s, %s, MTU %d, LID %d\n", d.name.c_str(), p.number,
                  p.state.c_str(), p.link_layer.c_str(), p.active_mtu, p.lid);
      for (const VerbsGid& g : p.gids) {
        std::printf("verbs: %s port %d GID %d: %s %s\n", d.name.c_str(), p.number, g.index,
                    g.type.c_str(), g.address.c_str());
      }
    }
    if (!d.error.empty()) std::printf("verbs: %s: error: %s\n", d.name.c_str(), d.error.c_str());
  }

  const TopologyInfo& t = r.topology;
  if (!t.error.empty()) {
    std::printf("hwloc: error: %s\n", t.error.c_str());
  } else {
    std::printf("hwloc: %s, %s, %s, %s (hwloc API %s)\n",
                Plural(t.packages, "package", "packages").c_str(),
                Plural(t.cores, "core", "cores").c_str(), Plural(t.pus, "PU", "PUs").c_str(),
                Plural(t.numa_nodes, "NUMA node", "NUMA nodes").c_str(), t.api_version.c_str());
  }
}

void PrintJson(const Report& r) {
  JsonWriter w;
  w.BeginObject();
  w.Field("rft_version", RFT_VERSION_STRING);

  w.Key("settings");
  w.BeginArray();
  for (const config::SettingInfo& s : config::AllSettings()) {
    bool set = config::IsSet(s.name);
    w.BeginObject();
    w.Field("name", s.name);
    w.Field("kind", config::KindName(s.kind));
    // The raw text when set (even if invalid), else the default.
    const char* raw = set ? config::DefaultEnv()(s.name.c_str()) : nullptr;
    w.Field("value", raw != nullptr ? std::string_view(raw) : std::string_view(s.default_text));
    w.Field("set", set);
    w.Field("valid", config::CheckSetting(s.name).ok());
    w.Field("default", s.default_text);
    w.Field("allowed", s.allowed);
    w.Field("doc", s.doc);
    w.EndObject();
  }
  w.EndArray();

  w.Key("warnings");
  w.BeginArray();
  for (const Status& p : r.problems) w.String(p.message());
  w.EndArray();

  w.Key("ucx");
  w.BeginObject();
  w.Field("version", r.ucx.version);
  w.Key("transports");
  w.BeginArray();
  for (const UcxTransport& t : r.ucx.transports) {
    w.BeginObject();
    w.Field("transport", t.transport);
    w.Field("device", t.device);
    w.Field("type", t.device_type);
    w.Field("md", t.md);
    w.EndObject();
  }
  w.EndArray();
  if (!r.ucx.error.empty()) w.Field("error", r.ucx.error);
  w.EndObject();

  w.Key("verbs");
  w.BeginObject();
  w.Key("devices");
  w.BeginArray();
  for (const VerbsDevice& d : r.verbs.devices) {
    w.BeginObject();
    w.Field("name", d.name);
    w.Field("transport", d.transport);
    w.Field("node_guid", d.node_guid);
    w.Field("locality", verbs::LocalityName(d.locality.locality));
    if (!d.locality.near_cpus.empty()) w.Field("near_cpus", d.locality.near_cpus);
    w.Field("max_qp", d.max_qp);
    w.Field("max_srq_wr", d.max_srq_wr);
    w.Field("max_cqe", d.max_cqe);
    w.Key("ports");
    w.BeginArray();
    for (const VerbsPort& p : d.ports) {
      w.BeginObject();
      w.Field("port", p.number);
      w.Field("state", p.state);
      w.Field("link_layer", p.link_layer);
      w.Field("active_mtu", p.active_mtu);
      w.Field("lid", p.lid);
      w.Key("gids");
      w.BeginArray();
      for (const VerbsGid& g : p.gids) {
        w.BeginObject();
        w.Field("index", g.index);
        w.Field("type", g.type);
        w.Field("address", g.address);
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    if (!d.error.empty()) w.Field("error", d.error);
    w.EndObject();
  }
  w.EndArray();
  if (!r.verbs.error.empty()) w.Field("error", r.verbs.error);
  w.EndObject();

  w.Key("hwloc");
  w.BeginObject();
  w.Field("api_version", r.topology.api_version);
  w.Field("packages", r.topology.packages);
  w.Field("cores", r.topology.cores);
  w.Field("pus", r.topology.pus);
  w.Field("numa_nodes", r.topology.numa_nodes);
  if (!r.topology.error.empty()) w.Field("error", r.topology.error);
  w.EndObject();

  w.EndObject();
  std::printf("%s\n", w.str().c_str());
}

int Main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("%s\n", RFT_VERSION_STRING);
      return 0;
    } else {
      std::fprintf(stderr, "rft_info: unknown argument \"%s\"\n%s", argv[i], kUsage);
      return 2;
    }
  }

  Report report;
  report.problems = config::EnvironmentProblems(config::ProcessEnvironment());
  for (const Status& p : report.problems) {
    std::fprintf(stderr, "rft_info: warning: %s\n", p.message().c_str());
  }
  // Probe before printing so that library chatter on stderr does not land mid-report.
  report.ucx = ProbeUcx();
  report.verbs = ProbeVerbs();
  report.topology = ProbeTopology();

  if (json) {
    PrintJson(report);
  } else {
    PrintText(report);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace
}  // namespace rft::info

int main(int argc, char** argv) { return rft::info::Main(argc, argv); }
