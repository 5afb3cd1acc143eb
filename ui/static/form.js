// A form drawn from a tool's input schema (JSON Schema as the API gives
// it): one field per property, typed by the schema, with the required
// marks, descriptions and defaults; arrays and objects as JSON text.

import { h } from "./dom.js";

// typeOf is a schema's main type: its "type", or the first of its "types"
// that is not null, or what enum or default imply.
export function typeOf(sch) {
  if (!sch) return "string";
  let t = sch.type;
  if (Array.isArray(sch.types)) t = sch.types;
  if (Array.isArray(t)) t = t.find((x) => x !== "null") || t[0];
  if (t) return t;
  if (sch.enum && sch.enum.length) return typeof sch.enum[0] === "number" ? "number" : "string";
  if (sch.properties) return "object";
  if (sch.items) return "array";
  if (sch.default !== undefined) {
    const d = sch.default;
    return Array.isArray(d) ? "array" : d === null ? "string" : typeof d === "object" ? "object" : typeof d;
  }
  return "any";
}

let seq = 0;

// SchemaForm renders the fields of an object schema and reads them back.
export class SchemaForm {
  constructor(schema, initial) {
    this.schema = schema || { type: "object" };
    this.fields = [];
    this.el = h("div", { class: "schema-form" });
    const props = this.schema.properties || {};
    const required = new Set(this.schema.required || []);
    const names = Object.keys(props);
    // Required first, in schema order otherwise.
    names.sort((a, b) => Number(required.has(b)) - Number(required.has(a)));
    for (const name of names) {
      const f = field(name, props[name] || {}, required.has(name), initial ? initial[name] : undefined);
      this.fields.push(f);
      this.el.append(f.el);
    }
    if (!names.length) {
      // A schema without properties may still take any object: the JSON
      // tab of the tool page sends one.
      this.el.append(h("p", { class: "muted" }, this.schema.additionalProperties === false
        ? "This tool takes no arguments."
        : "The schema names no arguments. Use the JSON tab to send some."));
    }
  }

  // values returns {args, errors}: the arguments as JSON, and the fields
  // whose text could not be read (JSON that does not parse, numbers that
  // are not numbers).
  values() {
    const args = {};
    const errors = [];
    for (const f of this.fields) {
      const r = f.read();
      f.setError(r.error || "");
      if (r.error) errors.push({ path: f.name, message: r.error });
      else if (r.set) args[f.name] = r.value;
    }
    return { args, errors };
  }

  // showErrors puts each validation error next to the field its path
  // starts with, and returns those that match no field.
  showErrors(verrs) {
    const byName = new Map(this.fields.map((f) => [f.name, f]));
    const rest = [];
    const msgs = new Map();
    for (const ve of verrs || []) {
      const top = (ve.path || "").split(/[.[]/)[0];
      const f = byName.get(top);
      if (!f) {
        rest.push(ve);
        continue;
      }
      const m = ve.path === top ? ve.message : `${ve.path}: ${ve.message}`;
      msgs.set(f, [...(msgs.get(f) || []), m]);
    }
    for (const f of this.fields) f.setError((msgs.get(f) || []).join("; "));
    return rest;
  }

  clearErrors() {
    for (const f of this.fields) f.setError("");
  }

  // fill sets the fields from an arguments object.
  fill(obj) {
    for (const f of this.fields) f.write(obj ? obj[f.name] : undefined);
  }

  focusFirst() {
    const f = this.fields[0];
    if (f) f.input.focus();
  }
}

function field(name, sch, required, initial) {
  const id = `f${++seq}-${name.replace(/[^\w-]/g, "_")}`;
  const type = typeOf(sch);
  const descId = `${id}-desc`;
  const errId = `${id}-err`;
  const hasDefault = sch.default !== undefined;
  let input;
  let dirty = false;
  const markDirty = () => (dirty = true);
  const describedBy = `${descId} ${errId}`;
  const common = { id, name, "aria-describedby": describedBy, "aria-required": required ? "true" : null, oninput: markDirty, onchange: markDirty };

  let kind;
  if (Array.isArray(sch.enum) && sch.enum.length) {
    kind = "enum";
    input = h("select", common,
      required && hasDefault ? null : h("option", { value: "" }, required ? "— choose —" : "— not set —"),
      sch.enum.map((v, i) => h("option", { value: String(i) }, typeof v === "string" ? v : JSON.stringify(v))));
  } else if (type === "boolean") {
    kind = "boolean";
    input = h("input", { ...common, type: "checkbox" });
  } else if (type === "integer" || type === "number") {
    kind = "number";
    input = h("input", {
      ...common, type: "number", inputmode: type === "integer" ? "numeric" : "decimal",
      step: type === "integer" ? (sch.multipleOf || 1) : (sch.multipleOf || "any"),
      min: sch.minimum ?? (typeof sch.exclusiveMinimum === "number" ? sch.exclusiveMinimum : null),
      max: sch.maximum ?? (typeof sch.exclusiveMaximum === "number" ? sch.exclusiveMaximum : null),
    });
  } else if (type === "string") {
    kind = "string";
    const long = (sch.maxLength || 0) > 1000 || /^(content|text|body|code|script|html|markdown|prompt|patch)$/i.test(name);
    input = long
      ? h("textarea", { ...common, rows: 5, spellcheck: "false", maxlength: sch.maxLength })
      : h("input", {
          ...common, type: sch.format === "uri" ? "url" : "text", spellcheck: "false", autocomplete: "off",
          maxlength: sch.maxLength, placeholder: sch.examples && sch.examples.length ? `e.g. ${sch.examples[0]}` : (sch.pattern ? `pattern ${sch.pattern}` : null),
        });
  } else {
    kind = "json";
    input = h("textarea", {
      ...common, rows: 4, spellcheck: "false", class: "mono",
      placeholder: type === "array" ? "[ … ] as JSON" : type === "object" ? "{ … } as JSON" : "any JSON value",
    });
  }

  const hints = [];
  if (sch.description) hints.push(sch.description);
  const rules = [];
  if (sch.minimum !== undefined) rules.push(`≥ ${sch.minimum}`);
  if (sch.maximum !== undefined) rules.push(`≤ ${sch.maximum}`);
  if (sch.minLength !== undefined) rules.push(`min length ${sch.minLength}`);
  if (sch.maxLength !== undefined) rules.push(`max length ${sch.maxLength}`);
  if (sch.pattern) rules.push(`pattern ${sch.pattern}`);
  if (sch.format) rules.push(`format ${sch.format}`);
  // Inference may already have written the default into the description.
  if (hasDefault && !/default/i.test(sch.description || "")) rules.push(`default ${JSON.stringify(sch.default)}`);

  const label = h("label", { for: id, class: "field-label" },
    h("span", { class: "field-name" }, name),
    required ? h("span", { class: "req", title: "required" }, h("span", { "aria-hidden": "true" }, "*"), h("span", { class: "sr-only" }, " (required)")) : null,
    h("span", { class: "field-type" }, type === "any" ? "JSON" : type));
  const desc = h("p", { id: descId, class: "field-desc" }, hints.join(" "), rules.length ? h("span", { class: "rules" }, rules.join(" · ")) : null);
  const err = h("p", { id: errId, class: "field-error", hidden: true });
  const wrap = h("div", { class: `field field-${kind}` },
    kind === "boolean" ? h("div", { class: "check" }, input, label) : [label, input], desc, err);

  const f = {
    name, input, el: wrap,
    setError(msg) {
      err.textContent = msg;
      err.hidden = !msg;
      if (msg) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    },
    write(v) {
      dirty = v !== undefined;
      if (v === undefined) v = sch.default;
      switch (kind) {
        case "enum": {
          const i = v === undefined ? -1 : sch.enum.findIndex((e) => JSON.stringify(e) === JSON.stringify(v));
          input.value = i < 0 ? "" : String(i);
          if (i < 0 && input.options.length && input.options[0].value !== "") input.selectedIndex = 0;
          break;
        }
        case "boolean":
          input.checked = v === true;
          break;
        case "number":
          input.value = typeof v === "number" ? String(v) : v === undefined ? "" : String(v);
          break;
        case "string":
          input.value = v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);
          break;
        default:
          input.value = v === undefined ? "" : JSON.stringify(v, null, 2);
      }
    },
    read() {
      switch (kind) {
        case "enum":
          return input.value === "" ? { set: false } : { set: true, value: sch.enum[Number(input.value)] };
        case "boolean":
          // An untouched optional checkbox without a default says nothing.
          return required || hasDefault || dirty ? { set: true, value: input.checked } : { set: false };
        case "number": {
          const t = input.value.trim();
          if (t === "") {
            return input.validity && input.validity.badInput ? { error: "not a number" } : { set: false };
          }
          const n = Number(t);
          if (!Number.isFinite(n)) return { error: "not a number" };
          return { set: true, value: n };
        }
        case "string":
          // An empty field is left out: the server's validation then
          // says what a required one needs, as the model would see it.
          return input.value === "" ? { set: false } : { set: true, value: input.value };
        default: {
          const t = input.value.trim();
          if (t === "") return { set: false };
          try {
            return { set: true, value: JSON.parse(t) };
          } catch (e) {
            return { error: `not valid JSON: ${e.message}` };
          }
        }
      }
    },
  };
  f.write(initial);
  return f;
}
