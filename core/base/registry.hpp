// Name -> factory registries. Variants register themselves from their own source file:
//   static const bool registered = fftune::register_variant<Transport>("p2p_sync", factory);
// The variant objects are linked as an OBJECT library so the linker keeps them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fftune {

template <class Interface>
class Registry {
public:
    using Factory = std::function<std::unique_ptr<Interface>()>;

    // One table per interface, shared by the library and its users: the
    // interface's header declares it (FFTUNE_DECLARE_REGISTRY) and its source
    // file defines it (FFTUNE_DEFINE_REGISTRY).
    static Registry& instance();

    bool add(const std::string& name, Factory factory) {
        if (!factories_.emplace(name, std::move(factory)).second)
            throw std::logic_error("variant registered twice: " + name);
        return true;
    }

    bool contains(const std::string& name) const { return factories_.count(name) != 0; }

    std::unique_ptr<Interface> create(const std::string& name) const {
        auto it = factories_.find(name);
        if (it == factories_.end())
            throw std::invalid_argument("unknown " + std::string(Interface::kind) + " '" + name +
                                        "' (allowed: " + joined_names() + ")");
        return it->second();
    }

    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& entry : factories_) out.push_back(entry.first);
        return out;
    }

    std::string joined_names() const {
        std::string s;
        for (const auto& n : names()) s += (s.empty() ? "" : ", ") + n;
        return s;
    }

private:
    std::map<std::string, Factory> factories_;
};

#define FFTUNE_DECLARE_REGISTRY(Interface) \
    template <>                                \
    Registry<Interface>& Registry<Interface>::instance()
#define FFTUNE_DEFINE_REGISTRY(Interface)                  \
    template <>                                            \
    Registry<Interface>& Registry<Interface>::instance() { \
        static Registry registry;                          \
        return registry;                                   \
    }

template <class Interface, class Impl>
bool register_variant(const std::string& name) {
    return Registry<Interface>::instance().add(name, [] { return std::make_unique<Impl>(); });
}

}  // namespace fftune
