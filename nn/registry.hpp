// One registry for every kind of plug-in (position encodings, tasks): entries with a `name`, in the order
// they were registered. A second entry of a name already taken is refused: two plug-ins claiming one
// name would otherwise shadow each other depending on registration order. An entry that extends another
// (the algorithmic suite adds decoder- and encoder-only forms to the sequence-to-sequence copy task)
// says so with replace().
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace relpos::nn {

template <class Entry>
class Registry {
public:
    // Throws std::logic_error when the name is taken (a programming error: two plug-ins, one name).
    void add(Entry e) {
        if (find(e.name))
            throw std::logic_error("a plug-in named '" + e.name + "' is registered already; every plug-in needs a name of its own");
        entries_.push_back(std::move(e));
    }
    // Replaces the entry of the same name, which must exist (std::logic_error otherwise).
    void replace(Entry e) {
        auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& x) { return x.name == e.name; });
        if (it == entries_.end()) throw std::logic_error("no plug-in named '" + e.name + "' to replace");
        *it = std::move(e);
    }
    // Removes the entry of that name, which must exist (std::logic_error otherwise), and returns it: for a
    // test that registers a plug-in of its own and must leave the process-wide registry as it found it.
    Entry remove(const std::string& name) {
        auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& x) { return x.name == name; });
        if (it == entries_.end()) throw std::logic_error("no plug-in named '" + name + "' to remove");
        Entry e = std::move(*it);
        entries_.erase(it);
        return e;
    }
    const Entry* find(const std::string& name) const {
        for (const auto& x : entries_)
            if (x.name == name) return &x;
        return nullptr;
    }
    std::vector<std::string> names() const {
        std::vector<std::string> n;
        for (const auto& x : entries_) n.push_back(x.name);
        return n;
    }
    const std::vector<Entry>& entries() const { return entries_; }

private:
    std::vector<Entry> entries_;
};

}  // namespace relpos::nn
