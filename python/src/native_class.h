// A Python class whose instances hold a C++ value inline, made with CPython's
// public C API (PyType_FromSpec) rather than pybind11's class machinery.
//
// Why: C slots on the launch path (kernel[...] and the launcher's call, the
// stream of kernel[grid, block, stream]) must reach the C++ object without a
// type lookup. pybind11 keeps its objects in a private layout
// (py::detail::instance) that a pybind11 upgrade may change silently; here the
// layout is ours (Object<T> below), so reaching the value is one load from a
// struct this file defines.
//
// Methods and properties are still pybind11 functions (py::cpp_function and
// the builtin property: public API): def() takes a callable whose first
// parameter is the value (T& / const T&, or a pointer to a member function of
// T) or the Python object (py::handle / py::object), as py::class_::def does.
// A pybind11 type_caster for T (NATIVE_CLASS_CASTER below) lets other bindings
// take and return T as if it were a py::class_.
//
// Instances are weak-referenceable (pybind11's keep_alive for objects it did
// not create uses a weak reference), and the class can be subclassed in
// Python (cudajit.Dispatcher); a subclass inherits the C slots.
#pragma once
#include <pybind11/pybind11.h>
#include <structmember.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace cj::py_native {

namespace py = pybind11;

struct Head {
  PyObject_HEAD
  PyObject* weakrefs;
};

template <typename T>
struct Object {
  Head head;
  T value;   // default-constructed in tp_new, destroyed in tp_dealloc
};


// The class object for T, once NativeClass<T> made it, and its __init__
// (a pybind11 function of (self, args...); none: Python cannot create one).
template <typename T>
struct Registry {
  static inline PyTypeObject* type = nullptr;
  static inline PyObject* init = nullptr;   // owned for the life of the process
};

// The value of an instance of T's class or of a subclass, unchecked: for the
// class's own C slots, whose `self` is always one.
template <typename T>
T& valueOf(PyObject* obj) {
  return reinterpret_cast<Object<T>*>(obj)->value;
}

// Where the value lies in an instance, in bytes from its start: for code
// below the bindings (runtime/args.cpp) that reads it without this header.
template <typename T>
constexpr size_t valueOffset() {
  return (sizeof(Head) + alignof(T) - 1) / alignof(T) * alignof(T);
}

// The value, or nullptr when `obj` is not an instance of T's class.
template <typename T>
T* valueIf(PyObject* obj) {
  PyTypeObject* type = Registry<T>::type;
  return type && PyObject_TypeCheck(obj, type) ? &valueOf<T>(obj) : nullptr;
}

template <typename T>
T& checkedValue(py::handle obj) {
  T* v = valueIf<T>(obj.ptr());
  if (!v) {
    const char* want = Registry<T>::type ? Registry<T>::type->tp_name : "?";
    throw py::type_error(std::string("expected a ") + want + ", not '" + Py_TYPE(obj.ptr())->tp_name +
                         "'");
  }
  return *v;
}

// A new instance of T's class holding `value`.
template <typename T>
py::object make(T value) {
  PyTypeObject* type = Registry<T>::type;
  py::object obj = py::reinterpret_steal<py::object>(type->tp_alloc(type, 0));
  if (!obj) throw py::error_already_set();
  auto* o = reinterpret_cast<Object<T>*>(obj.ptr());
  o->head.weakrefs = nullptr;
  new (&o->value) T(std::move(value));
  return obj;
}

namespace detail {

template <typename T>
PyObject* tpNew(PyTypeObject* type, PyObject*, PyObject*) {
  if (!Registry<T>::init) {
    PyErr_Format(PyExc_TypeError, "cannot create '%s' instances", type->tp_name);
    return nullptr;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  auto* o = reinterpret_cast<Object<T>*>(self);
  o->head.weakrefs = nullptr;
  new (&o->value) T();
  return self;
}

// tp_init: Registry<T>::init(self, *args, **kwargs). (A pybind11 function
// named __init__ would be taken for a constructor of a pybind11 class.)
template <typename T>
int tpInit(PyObject* self, PyObject* args, PyObject* kwargs) {
  const Py_ssize_t n = PyTuple_GET_SIZE(args);
  PyObject* full = PyTuple_New(n + 1);
  if (!full) return -1;
  Py_INCREF(self);
  PyTuple_SET_ITEM(full, 0, self);
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* a = PyTuple_GET_ITEM(args, k);
    Py_INCREF(a);
    PyTuple_SET_ITEM(full, k + 1, a);
  }
  PyObject* r = PyObject_Call(Registry<T>::init, full, kwargs);
  Py_DECREF(full);
  if (!r) return -1;
  Py_DECREF(r);
  return 0;
}

template <typename T>
void tpDealloc(PyObject* self) {
  auto* o = reinterpret_cast<Object<T>*>(self);
  if (o->head.weakrefs) PyObject_ClearWeakRefs(self);
  o->value.~T();
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);   // instances of heap types own a reference to their type
}

// The call signature of a callable: lambdas, function pointers, member
// function pointers.
template <typename F>
struct Signature : Signature<decltype(&std::decay_t<F>::operator())> {};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...) const> {
  using Return = R;
  using Args = std::tuple<A...>;
};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...)> : Signature<R (C::*)(A...) const> {};
template <typename R, typename... A>
struct Signature<R (*)(A...)> {
  using Return = R;
  using Args = std::tuple<A...>;
};

// The parameter `self` of a method from the stored value: the value itself,
// or what it points to when the class stores a pointer (shared_ptr<Dispatcher>).
template <typename Self, typename T>
decltype(auto) selfFrom(T& value) {
  if constexpr (std::is_same_v<std::decay_t<Self>, T>) {
    return (value);
  } else {
    if (!value) throw py::type_error("the object was not initialised");
    return (*value);
  }
}

template <typename S>
constexpr bool kIsPyObject = std::is_same_v<std::decay_t<S>, py::handle> ||
                             std::is_same_v<std::decay_t<S>, py::object>;

// f(self, a...) with `self` given as the value: a function of (py::handle, a...).
template <typename T, typename F, typename R, typename Self, typename... A>
auto bindSelf(F f, std::tuple<Self, A...>*) {
  if constexpr (kIsPyObject<Self>) {
    return f;
  } else {
    return [f = std::move(f)](py::handle self, A... a) -> R {
      return f(selfFrom<Self>(checkedValue<T>(self)), std::forward<A>(a)...);
    };
  }
}

template <typename T, typename F>
auto withSelf(F f) {
  using S = Signature<F>;
  return bindSelf<T, F, typename S::Return>(std::move(f), static_cast<typename S::Args*>(nullptr));
}

// A member function pointer of T: self.*f(a...).
template <typename T, typename R, typename C, typename... A>
auto withSelf(R (C::*f)(A...) const) {
  return [f](py::handle self, A... a) -> R {
    return (selfFrom<const C&>(checkedValue<T>(self)).*f)(std::forward<A>(a)...);
  };
}
template <typename T, typename R, typename C, typename... A>
auto withSelf(R (C::*f)(A...)) {
  return [f](py::handle self, A... a) -> R {
    return (selfFrom<C&>(checkedValue<T>(self)).*f)(std::forward<A>(a)...);
  };
}

}  // namespace detail

template <typename T>
class NativeClass {
 public:
  // `qualified_name` ("cudajit._core.Stream") and `doc` must be string
  // literals (Python 3.11 keeps the pointers). `slots`: C slots beyond
  // new/dealloc/doc (mp_subscript, ...).
  NativeClass(py::module_& m, const char* qualified_name, const char* doc,
              std::vector<PyType_Slot> slots = {}) {
    static PyMemberDef members[] = {
        {"__weaklistoffset__", T_PYSSIZET, static_cast<Py_ssize_t>(offsetof(Head, weakrefs)),
         READONLY, nullptr},
        {nullptr, 0, 0, 0, nullptr},
    };
    slots.push_back({Py_tp_new, reinterpret_cast<void*>(&detail::tpNew<T>)});
    slots.push_back({Py_tp_init, reinterpret_cast<void*>(&detail::tpInit<T>)});
    slots.push_back({Py_tp_dealloc, reinterpret_cast<void*>(&detail::tpDealloc<T>)});
    slots.push_back({Py_tp_members, members});
    slots.push_back({Py_tp_doc, const_cast<char*>(doc)});
    slots.push_back({0, nullptr});
    PyType_Spec spec = {qualified_name, static_cast<int>(sizeof(Object<T>)), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots.data()};
    PyObject* type = PyType_FromSpec(&spec);
    if (!type) throw py::error_already_set();
    cls_ = py::reinterpret_steal<py::object>(type);
    // valueOffset() states the layout rule the compiler follows; check it.
    alignas(Object<T>) unsigned char probe[sizeof(Object<T>)];
    auto* o = reinterpret_cast<Object<T>*>(probe);
    if (reinterpret_cast<unsigned char*>(&o->value) - probe != static_cast<std::ptrdiff_t>(valueOffset<T>()))
      throw std::logic_error("native_class.h: unexpected layout");
    Registry<T>::type = reinterpret_cast<PyTypeObject*>(type);
    const char* dot = std::strrchr(qualified_name, '.');
    m.add_object(dot ? dot + 1 : qualified_name, cls_);
  }

  // The constructor: f(self, args...) with self the object (py::handle),
  // which fills the default-constructed value in.
  template <typename F, typename... Extra>
  NativeClass& defInit(F f, const Extra&... extra) {
    py::cpp_function init(std::move(f), py::name("init"), extra...);
    Registry<T>::init = init.release().ptr();
    return *this;
  }

  // A static method: f(args...).
  template <typename F, typename... Extra>
  NativeClass& defStatic(const char* name, F f, const Extra&... extra) {
    py::cpp_function fn(std::move(f), py::name(name), py::scope(cls_),
                        py::sibling(py::getattr(cls_, name, py::none())), extra...);
    cls_.attr(name) = py::staticmethod(fn);
    return *this;
  }

  // A method: f(self, args...) where self is the value or the object.
  template <typename F, typename... Extra>
  NativeClass& def(const char* name, F f, const Extra&... extra) {
    py::cpp_function method(detail::withSelf<T>(std::move(f)), py::name(name), py::is_method(cls_),
                            py::sibling(py::getattr(cls_, name, py::none())), extra...);
    cls_.attr(name) = method;
    return *this;
  }

  // A read-only property: getter(self) where self is the value or the object.
  template <typename F, typename... Extra>
  NativeClass& defReadonly(const char* name, F getter, const char* doc = "", const Extra&... extra) {
    py::cpp_function get(detail::withSelf<T>(std::move(getter)), py::is_method(cls_), extra...);
    cls_.attr(name) = py::module_::import("builtins").attr("property")(get, py::none(), py::none(), doc);
    return *this;
  }

  py::handle ptr() const { return cls_; }
  PyTypeObject* type() const { return reinterpret_cast<PyTypeObject*>(cls_.ptr()); }

 private:
  py::object cls_;
};

}  // namespace cj::py_native

// pybind11 converts T to and from instances of its native class (put it in
// the global namespace of every binding file that passes T, after T's
// definition): arguments T& / const T& / T* refer to the value inside the
// object; results T are copied or moved into a new instance.
#define NATIVE_CLASS_CASTER(T, py_name)                                                 \
  namespace pybind11::detail {                                                          \
  template <>                                                                           \
  struct type_caster<T> {                                                               \
    static constexpr auto name = const_name(py_name);                                   \
    template <typename U>                                                               \
    using cast_op_type = pybind11::detail::cast_op_type<U>;                             \
    bool load(handle src, bool) {                                                       \
      value_ = cj::py_native::valueIf<T>(src.ptr());                                    \
      return value_ != nullptr;                                                         \
    }                                                                                   \
    operator T*() { return value_; }                                                    \
    operator T&() { return *value_; }                                                   \
    static handle cast(const T& src, return_value_policy, handle) {                     \
      return cj::py_native::make<T>(src).release();                                     \
    }                                                                                   \
    static handle cast(T&& src, return_value_policy, handle) {                          \
      return cj::py_native::make<T>(std::move(src)).release();                          \
    }                                                                                   \
    static handle cast(const T* src, return_value_policy policy, handle parent) {       \
      if (!src) return none().release();                                                \
      return cast(*src, policy, parent);                                                \
    }                                                                                   \
                                                                                        \
   private:                                                                             \
    T* value_ = nullptr;                                                                \
  };                                                                                    \
  }
