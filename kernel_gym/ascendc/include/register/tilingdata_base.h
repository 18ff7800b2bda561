// kgsim operator-project shim: BEGIN_TILING_DATA_DEF & co. The host class is a standard-layout
// struct whose fields are laid out as a plain C struct; the kernel side (GET_TILING_DATA) copies
// the tiling GM buffer into the same struct, so both sides agree on the layout. SetDataPtr binds
// an object to the raw tiling buffer, as CANN's does (kgsim/tiling_bind.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include "graph/ge_error_codes.h"
#include "kgsim/tiling_bind.h"

#define BEGIN_TILING_DATA_DEF(class_name)                                                          \
    class class_name {                                                                             \
    public:                                                                                        \
        size_t GetDataSize() const {                                                               \
            ::kgsim_tiling::flush(this, sizeof(*this));                                            \
            return sizeof(*this);                                                                  \
        }                                                                                          \
        void SaveToBuffer(void* buf, size_t cap) const {                                           \
            std::memcpy(buf, this, sizeof(*this) < cap ? sizeof(*this) : cap);                     \
        }                                                                                          \
        /* binds the object to p: its setters write there too (kgsim/tiling_bind.h) */            \
        void SetDataPtr(void* p) {                                                                 \
            std::memcpy(static_cast<void*>(this), p, sizeof(*this));                               \
            ::kgsim_tiling::bind(this, sizeof(*this), p);                                          \
        }                                                                                          \
        void InitData() { std::memset(static_cast<void*>(this), 0, sizeof(*this)); }               \
        /* the class's name, as written in BEGIN_TILING_DATA_DEF */                                \
        const char* GetTilingClassName() const { return #class_name; }

#define TILING_DATA_FIELD_DEF(data_type, field_name)                                               \
        data_type field_name{};                                                                    \
        void set_##field_name(data_type v) {                                                       \
            field_name = v;                                                                        \
            ::kgsim_tiling::write_through(&field_name, sizeof(field_name));                        \
        }                                                                                          \
        data_type get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_ARR(arr_type, arr_size, field_name)                                  \
        arr_type field_name[arr_size]{};                                                           \
        void set_##field_name(const arr_type* v) {                                                 \
            std::memcpy(field_name, v, sizeof(field_name));                                        \
            ::kgsim_tiling::write_through(field_name, sizeof(field_name));                         \
        }                                                                                          \
        arr_type* get_##field_name() { return field_name; }

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name)                                      \
        struct_type field_name{};                                                                  \
        struct_type& get_##field_name() { return field_name; }                                     \
        void set_##field_name(const struct_type& v) {                                              \
            field_name = v;                                                                        \
            ::kgsim_tiling::write_through(&field_name, sizeof(field_name));                        \
        }

// the class's closing `};` (code writes `END_TILING_DATA_DEF;` or leaves the semicolon out)
#define END_TILING_DATA_DEF };

// Registers the tiling data class of an op; the generated kernel-side code uses the alias.
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) using KgsimTilingFor_##op_type = class_name;
