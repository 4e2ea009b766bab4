import { useId, useState } from "react";

// The choices a staging job needs, as labelled selects with an empty first
// choice, so "nothing chosen yet" is visible.

export interface Choice {
  value: string;
  label: string;
}

export function OptionSelect({
  label,
  placeholder,
  value,
  onChange,
  options,
}: {
  label: string;
  placeholder: string;
  value: string;
  onChange: (value: string) => void;
  options: readonly Choice[];
}) {
  const id = useId();
  return (
    <div>
      <label htmlFor={id} className="label">
        {label}
      </label>
      <select id={id} className="input" value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{placeholder}</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Room type and style side by side: the designer's catalogue codes, or the quick dialog's short lists. */
export function RoomAndStyle({
  room,
  style,
  onRoom,
  onStyle,
  rooms,
  styles,
  styleLabel,
}: {
  room: string;
  style: string;
  onRoom: (value: string) => void;
  onStyle: (value: string) => void;
  rooms: readonly Choice[];
  styles: readonly Choice[];
  styleLabel: string;
}) {
  return (
    <div className="grid gap-3 sm:grid-cols-2">
      <OptionSelect label="Room type" placeholder="Choose a room type" value={room} onChange={onRoom} options={rooms} />
      <OptionSelect label={styleLabel} placeholder="Choose a style" value={style} onChange={onStyle} options={styles} />
    </div>
  );
}

/** The state behind RoomAndStyle: spread `fields` into it; `chosen` once both are picked. */
export function useRoomAndStyle() {
  const [room, setRoom] = useState("");
  const [style, setStyle] = useState("");
  return {
    room,
    style,
    chosen: room !== "" && style !== "",
    fields: { room, style, onRoom: setRoom, onStyle: setStyle },
  };
}
